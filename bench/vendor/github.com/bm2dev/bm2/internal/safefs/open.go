package safefs

import (
	"os"

	"golang.org/x/sys/unix"
)

// noFollow is what every open here adds to the caller's flags: a link at
// the name opened is not followed (ELOOP), the descriptor is not
// inherited by a child, and a terminal never becomes the process's
// controlling one.
const noFollow = unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NOCTTY

// OpenAt opens name in the directory dfd with flag and, when it creates
// the file, perm, never following a symbolic link at name itself. dfd is
// a walked directory (Dir.Fd) and name one component; or dfd is
// unix.AT_FDCWD and name a path whose directories the kernel resolves,
// links included, which only root's own directories allow. The error is
// the raw errno, as unix.Openat's.
func OpenAt(dfd int, name string, flag int, perm uint32) (int, error) {
	return unix.Openat(dfd, name, flag|noFollow, perm)
}

// OpenFile is os.OpenFile that never follows a symbolic link at path's
// last component (the open fails with ELOOP). The directories on the way
// are resolved by the kernel: it is for bm2's own files (state, spool,
// crash logs, locks), in directories only bm2's user writes. Add
// O_NONBLOCK to a read so that a FIFO in the file's place does not block
// it.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|noFollow, perm)
}
