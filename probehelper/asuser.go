package probehelper

import (
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// CheckPortAs is CheckPort with the sockets created as uid/gid.
//
// SO_REUSEPORT lets a socket join a port group only when it belongs to the
// same user as the listeners in it, and a socket belongs to the filesystem
// UID of the thread that creates it. So the check switches the filesystem
// UID and GID of one OS thread, never of the process: the probe keeps root
// for its D-Bus calls on every other thread. The thread is locked and never
// unlocked, so the Go runtime discards it when the goroutine ends and no
// other goroutine ever runs with the borrowed identity.
func CheckPortAs(uid, gid, port int) (PortState, error) {
	if uid == unix.Getuid() && gid == unix.Getgid() {
		return CheckPort(port)
	}
	type result struct {
		s   PortState
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // no Unlock: the thread dies with the goroutine
		// setfsgid/setfsuid return the previous id and report no error;
		// calling again with -1 reads the current one back.
		unix.RawSyscall(unix.SYS_SETFSGID, uintptr(gid), 0, 0)
		unix.RawSyscall(unix.SYS_SETFSUID, uintptr(uid), 0, 0)
		cur, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, ^uintptr(0), 0, 0)
		if int(cur) != uid {
			done <- result{err: &fsuidError{want: uid, got: int(cur)}}
			return
		}
		s, err := CheckPort(port)
		done <- result{s, err}
	}()
	r := <-done
	return r.s, r.err
}

type fsuidError struct{ want, got int }

func (e *fsuidError) Error() string {
	return "cannot take the app's user id for the port check (need root): fsuid is " +
		strconv.Itoa(e.got) + ", want " + strconv.Itoa(e.want)
}
