package sockdiag

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// OwnerOf finds a process holding l's socket: it scans /proc/*/fd for a
// link to socket:[l.Inode] and returns that process's PID and command
// name (/proc/<pid>/comm, at most 15 bytes), for messages such as "port
// 3000 is held by nginx (pid 812, uid 33)".
//
// A socket shared by several processes (inherited across fork, passed by
// systemd or over a unix socket) is reported once, for the lowest PID,
// which is usually the parent. ok is false when no process visible here
// holds the socket: it was closed meanwhile, or it belongs to a process
// whose descriptors this one may not read. Reading another user's
// /proc/<pid>/fd takes root (CAP_SYS_PTRACE), and a /proc mounted with
// hidepid= hides other users' processes altogether.
func OwnerOf(l Listener) (pid int, comm string, ok bool) {
	return ownerOf("/proc", l.Inode)
}

func ownerOf(proc string, inode uint64) (pid int, comm string, ok bool) {
	if inode == 0 {
		return 0, "", false
	}
	want := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	for _, pid := range pids(proc) {
		dir := filepath.Join(proc, strconv.Itoa(pid), "fd")
		if !holds(dir, want) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "comm"))
		if err != nil {
			continue // exited meanwhile
		}
		return pid, strings.TrimSuffix(string(data), "\n"), true
	}
	return 0, "", false
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

// holds tells whether one of the links in an fd directory reads want.
// An unreadable directory (not permitted, process gone) holds nothing.
func holds(dir, want string) bool {
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	fds, _ := d.Readdirnames(-1)
	for _, fd := range fds {
		if link, err := os.Readlink(dir + "/" + fd); err == nil && link == want {
			return true
		}
	}
	return false
}

// Holds tells whether one of the processes holds one of the sockets (by
// inode) among its file descriptors. Reading another user's
// /proc/<pid>/fd needs that user's fsuid or root's ptrace capability; when
// no process's descriptors could be read, Holds says why.
func Holds(pids []uint32, inodes []uint64) (bool, error) {
	return holdsAny("/proc", pids, inodes)
}

func holdsAny(proc string, pids []uint32, inodes []uint64) (bool, error) {
	want := make(map[string]bool, len(inodes))
	for _, in := range inodes {
		want["socket:["+strconv.FormatUint(in, 10)+"]"] = true
	}
	var firstErr error
	read := 0
	for _, pid := range pids {
		dir := filepath.Join(proc, strconv.FormatUint(uint64(pid), 10), "fd")
		d, err := os.Open(dir)
		if err != nil {
			if !os.IsNotExist(err) && firstErr == nil {
				firstErr = err
			}
			continue
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		read++
		for _, n := range names {
			if link, err := os.Readlink(filepath.Join(dir, n)); err == nil && want[link] {
				return true, nil
			}
		}
	}
	if read == 0 && firstErr != nil {
		return false, fmt.Errorf("sock_diag: read the sockets of pid %d: %w", pids[0], firstErr)
	}
	return false, nil
}
