// Package listen tells whether a unit's own processes listen on a TCP
// port: how serve, start and reload know that an instance accepts
// connections.
package listen

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/view"
)

// On tells whether a unit's own processes hold a listening TCP
// socket on port (IPv4 or IPv6, any address): one of their file
// descriptors is a socket that sock_diag (or, without it,
// /proc/<pid>/net/tcp{,6}) shows in state LISTEN on that port. This is how
// serve, start and reload know that an instance accepts connections (a
// bind test cannot tell: the port group is joinable as long as any
// instance listens). The processes are those of the unit's control group,
// or its main process when the group cannot be read. Reading another
// user's /proc/<pid>/fd needs root.
func On(_ context.Context, u view.UnitStatus, port int) (bool, error) {
	pids := u.PIDs()
	if len(pids) == 0 {
		return false, nil
	}
	if ls, err := sockdiag.Listeners(port); err == nil {
		var inodes []uint64
		for _, l := range ls {
			if u.UID == sysd.NoID || l.UID == u.UID {
				inodes = append(inodes, l.Inode)
			}
		}
		if len(inodes) == 0 {
			return false, nil
		}
		return sockdiag.Holds(pids, inodes)
	}
	var firstErr error
	for _, pid := range pids {
		ok, err := pidListensOn(pid, port)
		if ok {
			return true, nil
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return false, firstErr
}

// pidListensOn is listensOn for one process without sock_diag: the
// sockets /proc/<pid>/net/tcp{,6} lists as listening on port, looked for
// among the process's descriptors (sockdiag.Holds, the one reader of
// them).
func pidListensOn(pid uint32, port int) (bool, error) {
	proc := filepath.Join("/proc", strconv.FormatUint(uint64(pid), 10))
	var listening []uint64 // socket inodes listening on port
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		inodes, err := listeningInodes(filepath.Join(proc, f), port)
		if err != nil && !os.IsNotExist(err) {
			return false, err
		}
		for _, in := range inodes {
			if n, err := strconv.ParseUint(in, 10, 64); err == nil {
				listening = append(listening, n)
			}
		}
	}
	if len(listening) == 0 {
		return false, nil
	}
	return sockdiag.Holds([]uint32{pid}, listening)
}

// listeningInodes returns the inodes of the sockets /proc/net/tcp (or
// tcp6) lists in state LISTEN (0A) on port.
func listeningInodes(file string, port int) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", port)
	var out []string
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" || !strings.HasSuffix(fields[1], want) {
			continue
		}
		out = append(out, fields[9])
	}
	return out, sc.Err()
}
