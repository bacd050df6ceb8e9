package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bm2dev/bm2/internal/safefs"
	"golang.org/x/sys/unix"
)

// lockPoll is how often a command waiting for the registry lock tries it
// again.
const lockPoll = 20 * time.Millisecond

// Lock takes the registry lock, the file at path (the scope's
// layout.Layout.LockFile), waiting for it while another command holds
// it (calling waiting once when it starts to, with " (pid N)" naming the
// holder, or ""), until ctx ends or timeout (when positive) passes: then
// the error is a *WaitError. The returned function releases it; calling
// it more than once is harmless.
//
// The registered projects are the files in the config dir (and their
// private parts), and whether one more may be added depends on all the
// others: bm2 serve refuses a port range that overlaps a registered
// project (config.CheckConflict). Two commands that each read the registry,
// decide and write would both pass that check when they run at once, and
// both files would be left in place, one of them skipped by the generator.
// So every command that changes the set of registered projects or their
// files (serve, scale, delete, migrate) holds one exclusive lock from
// before it reads the registry until systemd has reloaded and the
// generator's verdict on what it wrote is known (serve and scale; delete
// and migrate hold it to their end); the commands run one at a time.
//
// The lock is flock(2) on a file in a root-owned runtime directory
// (/run/bm2/registry.lock, gone at reboot, when no one can hold it
// anyway). The kernel drops it when its holder exits, however it exits: a
// bm2 killed with SIGKILL never leaves a stale lock behind. The holder
// writes its PID into the file, so that a command waiting for the lock can
// tell whom it waits for.
func Lock(ctx context.Context, path string, timeout time.Duration, waiting func(holder string)) (unlock func(), err error) {
	fd, err := openLockFile(path)
	if err != nil {
		return nil, fmt.Errorf("lock the registered projects: %w", err)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var (
		waited bool
		since  time.Time
		holder string // " (pid N)", or "" when unknown
	)
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err == unix.EINTR {
			continue
		}
		if err != unix.EWOULDBLOCK {
			unix.Close(fd)
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !waited {
			waited, since = true, time.Now()
			if pid := lockHolder(fd); pid > 0 {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
			waiting(holder)
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			unix.Close(fd)
			return nil, &WaitError{Cause: ctx.Err(), Holder: holder, Waited: time.Since(since)}
		case <-t.C:
		}
	}
	// Holding it: say who holds it. A waiter that reads the file before
	// this write reads the previous holder's PID, or nothing.
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := unix.Ftruncate(fd, 0); err == nil {
		_, _ = unix.Pwrite(fd, pid, 0)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = unix.Ftruncate(fd, 0)
			unix.Close(fd) // closing the only descriptor of the open file releases the lock
		})
	}, nil
}

// WaitError is a wait for the registry lock that ctx ended (Cause:
// context.DeadlineExceeded when the timeout passed): nothing was changed.
type WaitError struct {
	Cause error
	// Holder names who holds the lock, " (pid N)", or "" when unknown.
	Holder string
	Waited time.Duration
}

func (e *WaitError) Error() string {
	what := "another bm2 command that changes the registered projects" + e.Holder
	if errors.Is(e.Cause, context.DeadlineExceeded) {
		return fmt.Sprintf("gave up after %s waiting for %s: %v", e.Waited.Round(time.Millisecond), what, e.Cause)
	}
	return fmt.Sprintf("interrupted while waiting for %s: %v", what, e.Cause)
}

func (e *WaitError) Unwrap() error { return e.Cause }

// lockHolder reads the PID the lock's holder wrote into the file; 0 when
// there is none.
func lockHolder(fd int) int {
	buf := make([]byte, 32)
	n, err := unix.Pread(fd, buf, 0)
	if err != nil || n <= 0 {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// openLockFile opens (creating it, mode 0600) the lock file at path, in a
// directory created with mode 0755 when missing. Neither the directory nor
// the file may be a symbolic link, and both must belong to the user bm2
// runs as (root) with no one else able to write them: whoever could replace
// the file could hand out the lock. The descriptor is close-on-exec, so
// that no child process (a runtime's --version, journalctl) holds the lock
// on after bm2 released it.
func openLockFile(path string) (int, error) {
	dir := filepath.Dir(path)
	if err := makeLockDir(dir); err != nil {
		return -1, err
	}
	dfd, err := safefs.OpenAt(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstat(dfd, &st); err != nil {
		return -1, &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return -1, fmt.Errorf("%s must be a directory of uid %d that no one else can write (it is uid %d, mode %04o)",
			dir, os.Geteuid(), st.Uid, st.Mode&0o7777)
	}
	name := filepath.Base(path)
	fd, err := safefs.OpenAt(dfd, name, unix.O_RDWR|unix.O_CREAT, 0o600)
	if err == unix.ELOOP {
		return -1, fmt.Errorf("%s is a symbolic link; remove it", path)
	}
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		unix.Close(fd)
		return -1, fmt.Errorf("%s must be a regular file of uid %d (it is uid %d, mode %o); remove it", path, os.Geteuid(), st.Uid, st.Mode)
	}
	if st.Mode&0o7777 != 0o600 {
		if err := unix.Fchmod(fd, 0o600); err != nil {
			unix.Close(fd)
			return -1, &fs.PathError{Op: "chmod", Path: path, Err: err}
		}
	}
	return fd, nil
}

// makeLockDir creates dir, mode 0755 whatever the umask (it is also the
// parent of the instances' RuntimeDirectory=, which their users must be
// able to reach), and any missing parent.
func makeLockDir(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return err
		}
		err = os.Mkdir(dir, 0o755)
	}
	switch {
	case err == nil:
		return os.Chmod(dir, 0o755)
	case errors.Is(err, fs.ErrExist):
		return nil
	}
	return err
}
