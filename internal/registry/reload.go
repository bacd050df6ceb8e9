package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/safefs"
)

// ProjectLock is the flock of one project's reload.
type ProjectLock struct{ f *os.File }

// Unlock releases the lock; a nil lock is not held.
func (l *ProjectLock) Unlock() {
	if l != nil && l.f != nil {
		l.f.Close() // releases the flock
	}
}

// ProjectLockPath is the lock file of a project's reloads in scope l.
func ProjectLockPath(l layout.Layout, name string) string {
	return filepath.Join(l.StateDir, "reload", name+".lock")
}

// TryLockProject takes the project's reload lock (ProjectLockPath)
// without waiting. The lock is nil when another command has it; holder
// is then the pid it wrote, when known.
func TryLockProject(l layout.Layout, name string) (lock *ProjectLock, holder int, err error) {
	path := ProjectLockPath(l, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, 0, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := safefs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("open %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return nil, pid, nil
		}
		return nil, 0, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &ProjectLock{f: f}, 0, nil
}
