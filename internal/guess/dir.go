package guess

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/safefs"
	"golang.org/x/sys/unix"
)

// Dir is the app's directory, read as data.
type Dir struct {
	d *safefs.Dir
}

// OpenDir opens the directory. Root follows only root's links on the
// way to it, as bm2 import does.
func OpenDir(abs string) (*Dir, error) {
	p := safefs.Policy{Follow: safefs.FollowAll}
	if os.Geteuid() == 0 {
		p.Follow = safefs.FollowRootOwned
	}
	d, err := safefs.OpenDir(abs, p)
	if err != nil {
		return nil, err
	}
	return &Dir{d: d}, nil
}

func (a *Dir) Close() { a.d.Close() }

// at walks to the directory that holds rel (a slash-separated path below
// the app's directory), following no link, and returns it and rel's last
// component; done closes what it opened.
func (a *Dir) at(rel string) (d *safefs.Dir, base string, done func(), err error) {
	dir, base := path.Split(rel)
	if dir == "" {
		return a.d, base, func() {}, nil
	}
	sub, err := a.d.OpenDir(strings.TrimSuffix(dir, "/"), safefs.Policy{Follow: safefs.FollowNone, NoDotDot: true})
	if err != nil {
		return nil, "", nil, err
	}
	return sub, base, func() { sub.Close() }, nil
}

// read reads the regular file rel, at most maxRead bytes (more is an
// error that wraps safefs.ErrTooLarge).
func (a *Dir) read(rel string) ([]byte, error) {
	d, base, done, err := a.at(rel)
	if err != nil {
		return nil, err
	}
	defer done()
	fd, err := safefs.OpenAt(d.Fd(), base, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		if err == unix.ELOOP {
			return nil, &fs.PathError{Op: "read", Path: rel, Err: errors.New("a symbolic link, which bm2 init does not follow")}
		}
		return nil, &fs.PathError{Op: "read", Path: rel, Err: err}
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: rel, Err: errors.New("not a regular file")}
	}
	return safefs.ReadAll(f, maxRead)
}

// exists tells whether rel is there and is not a directory (a link
// counts: the runtime follows it).
func (a *Dir) exists(rel string) bool {
	d, base, done, err := a.at(rel)
	if err != nil {
		return false
	}
	defer done()
	var st unix.Stat_t
	return unix.Fstatat(d.Fd(), base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR
}

// relPathRE is a path bm2 init takes from package.json or the code: plain
// names, no spaces, quotes or control characters.
var relPathRE = regexp.MustCompile(`^[A-Za-z0-9_.@+-]+(/[A-Za-z0-9_.@+-]+)*$`)

// cleanRel makes a path from package.json or the code relative to the
// app's directory: "" when it leaves the directory or has unusual
// characters.
func cleanRel(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	if !relPathRE.MatchString(p) || p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}

// quoted is untrusted text for a comment or a terminal: ASCII, escaped,
// in double quotes, at most about 80 characters of it.
func quoted(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "..."
	}
	return strconv.QuoteToASCII(s)
}
