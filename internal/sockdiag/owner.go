package sockdiag

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MaxFDs is how many file descriptors [SocketsOf] reads of a process at
// most, unless asked for fewer. An app is code bm2 does not trust: it can
// open a million descriptors, and reading every link of them would make
// each bm2 metrics as slow as the app likes. A web service holds one
// descriptor per connection and a few hundred besides, far below this.
const MaxFDs = 1 << 16

// ErrTooManyFDs is what [SocketsOf] says of a process holding more file
// descriptors than it reads.
var ErrTooManyFDs = errors.New("more file descriptors than are read of one process")

// fdBatch is how many names of an fd directory are read at a time.
const fdBatch = 1024

// eachFD calls fn with the number and the target of each link in
// /proc/<pid>/fd (under proc), in the kernel's order, lowest descriptor
// first, until fn returns false. It is the one reader of other processes' descriptors in
// bm2. A link that cannot be read (the descriptor closed meanwhile) is
// skipped.
//
// limit > 0 bounds the descriptors read: once limit are, eachFD stops
// and, if the process holds more, returns an error wrapping
// ErrTooManyFDs. The directory is read in batches, so that neither the
// time nor the memory it takes grows past the limit however many
// descriptors the process holds. n is how many descriptors were read.
//
// The error of a directory that cannot be read wraps fs.ErrNotExist (no
// such process, or it exited) or fs.ErrPermission (another user's
// process, read by a process without CAP_SYS_PTRACE).
func eachFD(proc string, pid uint32, limit int, fn func(fd int, link string) bool) (n int, err error) {
	dir := filepath.Join(proc, strconv.FormatUint(uint64(pid), 10), "fd")
	d, err := os.Open(dir)
	if err != nil {
		return 0, fmt.Errorf("sock_diag: read the descriptors of pid %d: %w", pid, err)
	}
	defer d.Close()
	for {
		batch := fdBatch
		if limit > 0 {
			if n == limit {
				if more, _ := d.Readdirnames(1); len(more) > 0 {
					return n, fmt.Errorf("sock_diag: pid %d: %w (%d)", pid, ErrTooManyFDs, limit)
				}
				return n, nil
			}
			batch = min(batch, limit-n)
		}
		names, err := d.Readdirnames(batch)
		for _, name := range names {
			n++
			fd, err := strconv.Atoi(name)
			if err != nil {
				continue
			}
			if link, err := os.Readlink(dir + "/" + name); err == nil && !fn(fd, link) {
				return n, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("sock_diag: read the descriptors of pid %d: %w", pid, err)
		}
	}
}

// socketInode reads the inode of a socket's fd link, "socket:[N]".
func socketInode(link string) (uint64, bool) {
	n, ok := strings.CutPrefix(link, "socket:[")
	if !ok {
		return 0, false
	}
	n, ok = strings.CutSuffix(n, "]")
	if !ok {
		return 0, false
	}
	ino, err := strconv.ParseUint(n, 10, 64)
	return ino, err == nil
}

// SocketsOf returns the inodes of the sockets (of any kind) among process
// pid's file descriptors, lowest descriptor first, once per descriptor: a
// socket held twice (dup(2)) is listed twice. It reads at most limit
// descriptors (MaxFDs when limit is 0 or more than MaxFDs); n is how many
// it read. A process holding more is an error wrapping ErrTooManyFDs,
// with the sockets found among the first limit.
//
// Reading another user's /proc/<pid>/fd takes root (CAP_SYS_PTRACE): the
// error then wraps fs.ErrPermission. A process that is gone is an error
// wrapping fs.ErrNotExist.
func SocketsOf(pid uint32, limit int) (inodes []uint64, n int, err error) {
	return socketsOf("/proc", pid, limit)
}

func socketsOf(proc string, pid uint32, limit int) (inodes []uint64, n int, err error) {
	if limit <= 0 || limit > MaxFDs {
		limit = MaxFDs
	}
	n, err = eachFD(proc, pid, limit, func(_ int, link string) bool {
		if ino, ok := socketInode(link); ok {
			inodes = append(inodes, ino)
		}
		return true
	})
	return inodes, n, err
}

// OwnerOf finds a process holding l's socket: it scans /proc/*/fd for a
// link to socket:[l.Inode] and returns that process's PID and name
// ([processName]), for messages such as "port 3000 is held by nginx (pid
// 812), uid 33 (www-data)". The name is the process's to choose: print it
// only escaped (reason.Clean).
//
// A socket shared by several processes (inherited across fork, passed by
// systemd or over a unix socket) is reported once, for the lowest PID,
// which is usually the parent. ok is false when no process visible here
// holds the socket: it was closed meanwhile, or it belongs to a process
// whose descriptors this one may not read. Reading another user's
// /proc/<pid>/fd takes root (CAP_SYS_PTRACE), and a /proc mounted with
// hidepid= hides other users' processes altogether.
func OwnerOf(l Listener) (pid int, name string, ok bool) {
	return ownerOf("/proc", l.Inode)
}

func ownerOf(proc string, inode uint64) (pid int, name string, ok bool) {
	if inode == 0 {
		return 0, "", false
	}
	for _, pid := range pids(proc) {
		found := false
		eachFD(proc, uint32(pid), 0, func(_ int, link string) bool {
			ino, ok := socketInode(link)
			found = ok && ino == inode
			return !found
		})
		if !found {
			continue
		}
		if name, ok := processName(proc, pid); ok {
			return pid, name, true
		}
		// exited meanwhile
	}
	return 0, "", false
}

// maxArgv0 is how much of /proc/<pid>/cmdline processName reads: an
// argv[0] longer than this is cut.
const maxArgv0 = 4096

// processName is what ps(1) names a process by: the first word of its
// command line, argv[0] (its base name: "node" for
// /usr/local/bin/node), or the whole of it when it holds a space, a title
// the process set itself ("PM2 v6.0.8: God Daemon (/root/.pm2)"). Without
// a command line (a kernel thread, a zombie) it is /proc/<pid>/comm.
// comm alone is no name: it is the main thread's, which programs rename
// (Node.js 24 calls it "MainThread"), and at most 15 bytes.
func processName(proc string, pid int) (string, bool) {
	dir := filepath.Join(proc, strconv.Itoa(pid))
	if f, err := os.Open(filepath.Join(dir, "cmdline")); err == nil {
		data, _ := io.ReadAll(io.LimitReader(f, maxArgv0))
		f.Close()
		argv0, _, _ := strings.Cut(string(data), "\x00")
		if argv0 = strings.TrimSpace(argv0); argv0 != "" {
			if !strings.ContainsAny(argv0, " \t") {
				if base := filepath.Base(argv0); base != "/" && base != "." {
					argv0 = base
				}
			}
			return argv0, true
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return "", false
	}
	return strings.TrimSuffix(string(data), "\n"), true
}

// pids lists the processes in proc, lowest first.
func pids(proc string) []int {
	d, err := os.Open(proc)
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []int
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// Holds tells whether one of the processes holds one of the sockets (by
// inode) among its file descriptors. Reading another user's
// /proc/<pid>/fd needs that user's fsuid or root's ptrace capability; when
// no process's descriptors could be read, Holds says why.
func Holds(pids []uint32, inodes []uint64) (bool, error) {
	_, ok, err := holder("/proc", pids, inodes)
	return ok, err
}

// A Holding is one file descriptor of a process that refers to a socket.
type Holding struct {
	PID   uint32
	FD    int
	Inode uint64
}

// Holder finds a descriptor of one of the sockets (by inode) among those
// of the processes, looked at in the order given, each lowest descriptor
// first: what pidfd_getfd(2) takes a copy of. ok is false when none of
// them holds one. Reading other users' descriptors takes what [Holds]
// says.
func Holder(pids []uint32, inodes []uint64) (h Holding, ok bool, err error) {
	return holder("/proc", pids, inodes)
}

func holder(proc string, pids []uint32, inodes []uint64) (Holding, bool, error) {
	want := make(map[uint64]bool, len(inodes))
	for _, in := range inodes {
		want[in] = true
	}
	var firstErr error
	read := 0
	for _, pid := range pids {
		var h Holding
		found := false
		_, err := eachFD(proc, pid, 0, func(fd int, link string) bool {
			ino, ok := socketInode(link)
			found = ok && want[ino]
			if found {
				h = Holding{PID: pid, FD: fd, Inode: ino}
			}
			return !found
		})
		if found {
			return h, true, nil
		}
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
				firstErr = err
			}
			continue
		}
		read++
	}
	if read == 0 && firstErr != nil {
		return Holding{}, false, firstErr
	}
	return Holding{}, false, nil
}
