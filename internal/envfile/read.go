package envfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bm2dev/bm2/internal/safefs"
	"golang.org/x/sys/unix"
)

// MaxSize is the largest env_file bm2 reads.
const MaxSize = 1 << 20

// Read opens and parses an app's env_file as the calling identity (the
// app's user: the run wrapper, or a root process inside identity.Do). It
// refuses, with a message that says why:
//
//   - a symbolic link, at the file itself or, below dir (the app's cwd,
//     which the app's user may own), anywhere on the way: a link would let
//     the app's user point bm2 at somebody else's file;
//   - anything but a regular file;
//   - a file owned by anybody but root or owner (the app's uid);
//   - a file larger than MaxSize.
func Read(path, dir string, owner int) ([]Var, error) {
	fd, err := open(path, dir)
	if err != nil {
		return nil, explain(path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Uid != 0 && int(st.Uid) != owner {
		return nil, fmt.Errorf("%s is owned by uid %d, neither root nor the app's user (uid %d): chown it to one of them", path, st.Uid, owner)
	}
	data, err := safefs.ReadAll(f, MaxSize)
	if errors.Is(err, safefs.ErrTooLarge) {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxSize)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Parse(data), nil
}

// open opens path for reading without following symlinks: below dir, no
// component may be a symlink (safefs.FollowNone from dir on); elsewhere,
// and down to dir, only the last component is checked (the directories
// above the app's are the administrator's).
func open(path, dir string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_NONBLOCK
	rel, err := filepath.Rel(dir, path)
	if dir == "" || err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return safefs.OpenAt(unix.AT_FDCWD, path, flags, 0)
	}
	top, err := safefs.OpenDir(dir, safefs.Policy{Follow: safefs.FollowAll})
	if err != nil {
		return -1, err
	}
	defer top.Close()
	d, err := top.OpenDir(filepath.Dir(rel), safefs.Policy{Follow: safefs.FollowNone})
	if err != nil {
		return -1, err
	}
	defer d.Close()
	return safefs.OpenAt(d.Fd(), filepath.Base(rel), flags, 0)
}

func explain(path string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%s is a symbolic link, or lies behind one: bm2 reads env_file only as a plain file (point env_file at the file itself)", path)
	case errors.Is(err, unix.EXDEV):
		return fmt.Errorf("%s leads out of the app's directory", path)
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%s does not exist", path)
	case errors.Is(err, unix.EACCES):
		return fmt.Errorf("%s cannot be read by the app's user (permission denied)", path)
	}
	return fmt.Errorf("%s: %w", path, err)
}
