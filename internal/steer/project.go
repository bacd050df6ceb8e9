package steer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/safefs"
)

// PinRoot is where bm2 pins the group of each cluster-mode project of
// system scope: /sys/fs/bpf/bm2/<project>.
const PinRoot = "/sys/fs/bpf/bm2"

// A Store is where bm2 keeps its projects' groups and what goes with
// them: the pins (Pins/<project>, on a bpf filesystem), and, in a
// directory root's alone (Run, /run/bm2/steer), each project's lock and
// its mark that steering is unavailable, both gone at the next boot.
type Store struct {
	Pins string // PinRoot
	Run  string // layout's RunStateDir/steer
}

// Dir is where project's group is pinned.
func (s Store) Dir(project string) string { return filepath.Join(s.Pins, project) }

// Lock takes project's lock (flock(2) on Run/<project>.lock, waiting for
// it): whoever changes the project's slots holds it, since Add and Remove
// of two processes must not interleave. The kernel releases it however
// the process ends.
func (s Store) Lock(project string) (unlock func(), err error) {
	if err := s.runDir(); err != nil {
		return nil, err
	}
	path := filepath.Join(s.Run, project+".lock")
	f, err := safefs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the steering lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// runDir makes Run, root's alone (0700), unless it is there; a directory
// someone else could write is refused.
func (s Store) runDir() error {
	if !filepath.IsAbs(s.Run) {
		return fmt.Errorf("steering's run directory %q is not an absolute path", s.Run)
	}
	// Its parent (/run/bm2) is for everyone to read (the health checks'
	// counts, for bm2 list), whatever the umask (an instance's is 0077),
	// the directory itself for root alone.
	if parent := filepath.Dir(s.Run); !exists(parent) {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", parent, err)
		}
		if err := os.Chmod(parent, 0o755); err != nil {
			return err
		}
	}
	if err := os.Mkdir(s.Run, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", s.Run, err)
	}
	return OwnDir(s.Run)
}

// OwnDir is nil when dir is a directory (not a link to one) of this
// process's uid that no one else may write: the run directory, and the
// pin directories on a bpf file system that anyone may write (a bpffs
// mounted without mode=0700 is 1777), where another user could otherwise
// plant a directory or a link for root to pin into or unpin through.
func OwnDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("%s is not a directory of uid %d that only it may write (mode %o, uid %d)", dir, os.Geteuid(), st.Mode&0o7777, st.Uid)
	}
	return nil
}

// ownPins checks the pin root and, when it exists, project's directory
// (OwnDir) before anything is opened, pinned or unpinned there.
func (s Store) ownPins(project string) error {
	if err := OwnDir(s.Pins); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := OwnDir(s.Dir(project)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// unavailablePath is project's mark that steering is unavailable.
func (s Store) unavailablePath(project string) string {
	return filepath.Join(s.Run, project+".unavailable")
}

// MarkUnavailable records that project's port cannot be steered, and why
// (reason, one of the Reason* words or another; detail, one line). first
// is true for the first mark of this boot: the one caller that reports it
// (bm2's steering_unavailable event). A later mark changes nothing.
func (s Store) MarkUnavailable(project, reason, detail string) (first bool, err error) {
	if err := s.runDir(); err != nil {
		return false, err
	}
	line := func(t string) string { return strings.ReplaceAll(t, "\n", " ") }
	return safefs.CreateExclusive(s.unavailablePath(project), []byte(line(reason)+"\n"+line(detail)+"\n"), 0o600)
}

// Unavailable reads project's mark: whether steering was found
// unavailable this boot, and why. A mark that cannot be read (not root)
// is an error matching fs.ErrPermission.
func (s Store) Unavailable(project string) (reason, detail string, ok bool, err error) {
	if s.Run == "" {
		return "", "", false, nil
	}
	f, err := safefs.OpenFile(s.unavailablePath(project), os.O_RDONLY|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	defer f.Close()
	data, err := safefs.ReadAll(f, 4096)
	if err != nil {
		return "", "", false, err
	}
	reason, detail, _ = strings.Cut(strings.TrimSuffix(string(data), "\n"), "\n")
	return reason, detail, true, nil
}

// Remove takes away what bm2 keeps of project (bm2 delete): its pins,
// whose group steers on while it has listeners and goes with the last,
// and its mark. Nothing there is not an error.
func (s Store) Remove(project string) error {
	var err error
	if s.Pins != "" {
		if err = s.ownPins(project); err == nil {
			err = UnpinDir(s.Dir(project))
		}
	}
	if s.Run == "" {
		return err
	}
	if rerr := os.Remove(s.unavailablePath(project)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if rerr := os.Remove(filepath.Join(s.Run, project+".lock")); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// UnpinDir removes the pins of a group in dir, and dir, without opening
// them: also a half-pinned group (a process that died while pinning), or
// one of another layout. A directory that does not exist is not an
// error; one that holds anything else stays, and so is an error.
func UnpinDir(dir string) error {
	var err error
	for _, name := range []string{pinProg, pinTable, pinSocks} {
		if rerr := os.Remove(filepath.Join(dir, name)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	if rerr := os.Remove(dir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// Group opens project's group for port, or makes and pins a new one when
// there is none, or none that Open takes (half pinned, another layout), or
// one for another port (the project's port changed): that one is
// unpinned first, and steers on while its old port has listeners. Call it
// with the project's Lock held. A host that cannot steer gets an
// *UnavailableError.
func (s Store) Group(project string, port int) (g *Group, created bool, err error) {
	if err := s.ownPins(project); err != nil {
		return nil, false, err
	}
	dir := s.Dir(project)
	g, err = Open(dir)
	switch {
	case err == nil && g.Port() == port:
		return g, false, nil
	case err == nil:
		g.Close()
	case errors.Is(err, ErrUnavailable):
		return nil, false, err
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrIncompatible):
		// Not to be taken for no group: a refusal (EPERM) must not
		// unpin the one there is.
		return nil, false, classify("open the group in "+dir, errors.Unwrap(err))
	}
	if err := UnpinDir(dir); err != nil {
		return nil, false, fmt.Errorf("unpin the old group in %s: %w", dir, err)
	}
	if g, err = New(port); err != nil {
		return nil, false, err
	}
	if err := g.Pin(dir); err != nil {
		g.Close()
		return nil, false, err
	}
	return g, true, nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
