package journal

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// WriteFailed is the state_write_failed event of a file bm2's root side
// could not write (a crash.log, an errored mark, the notification spool):
// path is that file, err the write's error, instance "" for a file of the
// whole project. lost says, for a person, what the file would have kept
// and what goes on without it ("the crash is in the journal only"). The
// event names the errno (BM2_ERRNO) when err carries one, so that a full
// disk (ENOSPC) reads apart from a read-only one (EROFS) or a failing one
// (EIO); BM2_DETAIL is err itself, which may name a directory on the way.
func WriteFailed(project, instance, path string, err error, lost string) Event {
	errno := ErrnoName(err)
	why := err.Error()
	if errno != "" {
		why = errno + ", " + ErrnoText(errno)
	}
	who := instance
	if who == "" {
		who = "project " + project
	}
	msg := fmt.Sprintf("%s: %s could not be written (%s)", who, path, why)
	if lost != "" {
		msg += "; " + lost
	}
	return Event{Kind: StateWriteFailed, Project: project, Instance: instance, Path: path, Errno: errno,
		Message: msg, Detail: err.Error()}
}

// ReportWriteFailure says err, a failed write of path, through sink
// ([WriteFailed]) and returns nil once it is said: the caller goes on
// with the rest of its work, since a full disk must not stop a restart
// or a reaction, and the failure is in the journal. It returns err, with
// the emit's error, only when it could not be said either. A nil err is
// nothing to say.
func ReportWriteFailure(sink Sink, project, instance, path string, err error, lost string) error {
	if err == nil {
		return nil
	}
	if eerr := sink.Emit(WriteFailed(project, instance, path, err, lost)); eerr != nil {
		return fmt.Errorf("%w (and %s could not be said: %v)", err, StateWriteFailed, eerr)
	}
	return nil
}

// ErrnoName is the name of the errno in err's chain ("ENOSPC"), "" when it
// has none.
func ErrnoName(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno == 0 {
		return ""
	}
	return unix.ErrnoName(errno)
}

// ErrnoText is what the C library says of an errno named as [ErrnoName]
// names it ("no space left on device" for ENOSPC); the name itself when
// it is none Linux knows.
func ErrnoText(name string) string {
	if name == "" {
		return ""
	}
	for e := syscall.Errno(1); e < 4096; e++ {
		if unix.ErrnoName(e) == name {
			return e.Error()
		}
	}
	return name
}
