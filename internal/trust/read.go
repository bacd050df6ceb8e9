package trust

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bm2dev/bm2/internal/safefs"
	"golang.org/x/sys/unix"
)

// Nobody is the speaker of a file that more than one user, or anyone,
// could have written: it speaks for none of them.
const Nobody = -1

// MaxFile bounds what Read reads: a project file is small.
const MaxFile = 4 << 20

// File is a file as Read found it: what it held, and who could have
// written that.
type File struct {
	// Path is the file's real path: its directories and the links on
	// the way resolved, as walked.
	Path string
	Data []byte
	UID  int // the file's owner
	// Writers are the users other than root who could have decided what
	// was read: the owners of the file, of every directory walked and of
	// every link followed. Sorted.
	Writers []int
	// Open says why anyone else could have (a directory or the file that
	// others may write); "" when no one else could.
	Open string
	// UserLinks are the symbolic links followed that a user other than
	// root owns (their owners are among Writers), as walked: a caller
	// that must not let a user point root's read elsewhere refuses them.
	UserLinks []string
}

// Speaker is the one user the file speaks for: 0 when only root could
// have written it, a uid when only that user (and root) could, Nobody
// otherwise.
func (f File) Speaker() int {
	switch {
	case f.Open != "" || len(f.Writers) > 1:
		return Nobody
	case len(f.Writers) == 1:
		return f.Writers[0]
	}
	return 0
}

// Why says, for a file that speaks for Nobody, why.
func (f File) Why() string {
	if f.Open != "" {
		return f.Open
	}
	if len(f.Writers) > 1 {
		ids := make([]string, len(f.Writers))
		for i, u := range f.Writers {
			ids[i] = fmt.Sprint(u)
		}
		return "uids " + strings.Join(ids, ", ") + " own the file, a directory above it or a link on the way, so each of them could have written it"
	}
	return ""
}

// Read reads the file at path once, from a file descriptor, and says
// who could have written what it read. The path is walked from / one
// component at a time without following a link by path (safefs.Resolve
// with safefs.FollowAll): a link is read and its target walked in turn,
// its owner counted among the writers, so that a link swapped after the
// walk changes nothing that was read. A group-writable file or directory
// counts as its owner's alone when the group is the owner's private
// group (same name and gid, no other member); acc resolves that. ACLs
// are not looked at.
func Read(path string, acc Accounts) (File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return File{}, err
	}
	w := walker{acc: acc, writers: map[int]bool{}}
	f, err := w.read(abs)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return File{}, err
		}
		return File{}, fmt.Errorf("read %s: %w", path, err)
	}
	for u := range w.writers {
		f.Writers = append(f.Writers, u)
	}
	slices.Sort(f.Writers)
	f.Open = w.open
	f.UserLinks = w.links
	return f, nil
}

type walker struct {
	acc     Accounts
	writers map[int]bool
	open    string
	links   []string
}

func (w *walker) read(abs string) (File, error) {
	d, name, err := safefs.Resolve(abs, safefs.Policy{Follow: safefs.FollowAll, Visit: w.visit})
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Op == "open" {
			pe.Op = "read" // what Read failed to do, as the file's own errors say
		}
		return File{}, err
	}
	defer d.Close()
	return w.file(d.Fd(), name, filepath.Join(d.Path(), name))
}

// visit counts the owner of every directory walked and link followed.
func (w *walker) visit(s safefs.Step) {
	if !s.Link {
		w.note(s.Stat, s.Path, true)
		return
	}
	if s.Stat.Uid != 0 {
		w.writers[int(s.Stat.Uid)] = true
		w.links = append(w.links, s.Path)
	}
}

// file opens and reads the final component.
func (w *walker) file(dfd int, name, path string) (File, error) {
	fd, err := safefs.OpenAt(dfd, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		if err == unix.ELOOP {
			err = errors.New("it was replaced by a symbolic link while it was read")
		}
		return File{}, &os.PathError{Op: "read", Path: path, Err: err}
	}
	fh := os.NewFile(uintptr(fd), path)
	defer fh.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return File{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return File{}, fmt.Errorf("%s is not a regular file", path)
	}
	w.note(st, path, false)
	data, err := safefs.ReadAll(fh, MaxFile)
	if errors.Is(err, safefs.ErrTooLarge) {
		return File{}, fmt.Errorf("%s is larger than %d MiB: not a project file", path, MaxFile>>20)
	}
	if err != nil {
		return File{}, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return File{Path: path, Data: data, UID: int(st.Uid)}, nil
}

// note counts who may change what st is (a directory: what it holds).
func (w *walker) note(st unix.Stat_t, path string, dir bool) {
	if st.Uid != 0 {
		w.writers[int(st.Uid)] = true
	}
	if w.open != "" {
		return
	}
	what := "the file"
	if dir {
		what = "directory " + path
		if st.Mode&unix.S_ISVTX != 0 {
			// Sticky: others may add entries, never replace one that is
			// not theirs; whose the entries walked are is counted.
			return
		}
	}
	mode := st.Mode & 0o7777
	switch {
	case st.Mode&0o002 != 0:
		w.open = fmt.Sprintf("%s is writable by every user (mode %04o)", what, mode)
	case st.Mode&0o020 != 0 && !w.privateGroup(int(st.Uid), int(st.Gid)):
		w.open = fmt.Sprintf("%s is writable by its group, gid %d (mode %04o)", what, st.Gid, mode)
	}
}

// privateGroup tells whether gid is uid's private group: the user's
// primary group, of the user's name, with no other member.
func (w *walker) privateGroup(uid, gid int) bool {
	if w.acc == nil {
		return false
	}
	u, err := w.acc.UserID(uid)
	if err != nil || u.GID != gid {
		return false
	}
	g, err := w.acc.GroupID(gid)
	if err != nil || g.Name != u.Name {
		return false
	}
	for _, m := range g.Members {
		if m != u.Name {
			return false
		}
	}
	return true
}
