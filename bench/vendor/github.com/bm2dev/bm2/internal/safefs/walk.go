package safefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Follow says which symbolic links a walk follows. A link it does not
// follow ends the walk with ELOOP, naming the link.
type Follow int

const (
	// FollowNone follows no link: below an app's directory, which its
	// user may own, any link could point bm2 at somebody else's file.
	FollowNone Follow = iota
	// FollowRootOwned follows a link only when root owns it and the
	// directory that holds it, and no one else may write that directory
	// (no group or other write bit): a link the system made, such as
	// /var/run -> /run, never one a user made or could have replaced.
	FollowRootOwned
	// FollowAll follows every link, reading it and walking its target in
	// turn; Policy.Visit is shown each, so that a caller can count its
	// owner among those who decided what was reached.
	FollowAll
)

// maxHops is how many links a walk follows before it gives up (ELOOP),
// as the kernel does.
const maxHops = 40

// Policy is how a walk treats what it meets on the way.
type Policy struct {
	Follow Follow
	// Create makes a directory that is missing on the way (mode 0755 less
	// the umask, as the caller) and walks into it.
	Create bool
	// NoDotDot refuses ".." in a link's target; otherwise ".." goes back
	// to the directory walked through before (never above / or, for
	// Dir.OpenDir, above the directory walked from: EXDEV). The path given
	// is cleaned first, so only a link's target can hold one.
	NoDotDot bool
	// Visit, when set, is shown every directory the walk opens (/ first)
	// and every link it follows, before it follows it.
	Visit func(Step)
}

// A Step is what a walk went through.
type Step struct {
	Path string // as walked: the links before it resolved
	Link bool   // a link followed (Stat is the link's own); else a directory opened
	Stat unix.Stat_t
}

// A Dir is a directory a walk reached: an O_PATH descriptor, to walk on
// from (Dir.OpenDir), to open a name in (OpenAt with Fd) or to write a file
// in (Dir.Write), and the path it was reached by, the links on the way
// resolved.
type Dir struct {
	fd   int
	path string
}

// Fd is the directory's descriptor; it stays the Dir's.
func (d *Dir) Fd() int { return d.fd }

// Path is the path the directory was reached by.
func (d *Dir) Path() string { return d.path }

// Stat is fstat(2) of the directory.
func (d *Dir) Stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return st, &os.PathError{Op: "stat", Path: d.path, Err: err}
	}
	return st, nil
}

// Close closes the descriptor.
func (d *Dir) Close() error {
	if d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// OpenDir opens the directory at path, walking it from / as p says; every
// component, the last included, must be a directory or a link p follows
// to one. A relative path is taken from the working directory; the path
// is cleaned first (filepath.Abs).
func OpenDir(path string, p Policy) (*Dir, error) {
	w, err := startAtRoot(path, p)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if _, err := w.run(false); err != nil {
		return nil, err
	}
	return w.take()
}

// OpenDir opens the directory at rel below d, walking it from d as p says.
// The walk does not climb above d: ".." there, or an absolute rel, is
// EXDEV (a link p follows may still lead anywhere).
func (d *Dir) OpenDir(rel string, p Policy) (*Dir, error) {
	w, err := startAt(d, rel, p)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if _, err := w.run(false); err != nil {
		return nil, err
	}
	return w.take()
}

// Resolve walks path from / as p says to its last component, following a
// link there too when p follows it, and returns the directory that holds
// what is left and its name: open it with OpenAt(dir.Fd(), name, ...),
// which fails (ELOOP) should a link have been put there since. Whether it
// exists is not checked: the open says. A path that ends on a directory
// (a link's target ending in "..") gives that directory and ".".
func Resolve(path string, p Policy) (*Dir, string, error) {
	w, err := startAtRoot(path, p)
	if err != nil {
		return nil, "", err
	}
	defer w.close()
	name, err := w.run(true)
	if err != nil {
		return nil, "", err
	}
	d, err := w.take()
	if err != nil {
		return nil, "", err
	}
	return d, name, nil
}

// walk is one walk: the directories it went through, innermost last.
type walk struct {
	p     Policy
	arg   string   // the path as given, for messages
	rest  []string // the components still to walk
	stack []frame
	// beneath: stack[0] is the caller's directory, which ".." may not
	// climb above.
	beneath bool
	hops    int
}

type frame struct {
	Dir
	own bool // the walk's to close; false for the caller's directory
}

func startAtRoot(path string, p Policy) (*walk, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	w := &walk{p: p, arg: path, rest: split(abs)}
	if err := w.toRoot(); err != nil {
		return nil, err
	}
	return w, nil
}

func startAt(d *Dir, rel string, p Policy) (*walk, error) {
	clean := filepath.Clean(rel)
	if filepath.IsAbs(clean) {
		return nil, &os.PathError{Op: "open", Path: rel, Err: unix.EXDEV}
	}
	return &walk{p: p, arg: rel, rest: split(clean), stack: []frame{{Dir: *d}}, beneath: true}, nil
}

// close closes what the walk opened and still holds.
func (w *walk) close() {
	for _, f := range w.stack {
		if f.own {
			unix.Close(f.fd)
		}
	}
	w.stack = nil
}

// take hands the innermost directory to the caller.
func (w *walk) take() (*Dir, error) {
	top := &w.stack[len(w.stack)-1]
	if top.own {
		top.own = false
		return &Dir{fd: top.fd, path: top.path}, nil
	}
	// The caller's own directory: a descriptor of its own.
	fd, err := OpenAt(top.fd, ".", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: top.path, Err: err}
	}
	return &Dir{fd: fd, path: top.path}, nil
}

// toRoot makes / the walk's only directory: where it starts, or where an
// absolute link's target starts it over.
func (w *walk) toRoot() error {
	if len(w.stack) > 0 && w.stack[0].own && w.stack[0].path == "/" {
		for _, f := range w.stack[1:] {
			unix.Close(f.fd)
		}
		w.stack = w.stack[:1]
		return nil
	}
	w.close()
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: "/", Err: err}
	}
	w.stack = []frame{{Dir: Dir{fd: fd, path: "/"}, own: true}}
	w.beneath = false
	return w.visitDir(fd, "/")
}

func (w *walk) visitDir(fd int, path string) error {
	if w.p.Visit == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	w.p.Visit(Step{Path: path, Stat: st})
	return nil
}

// run walks w.rest. With last, the final component is not walked into: a
// link there is followed as p says, and the name of what is there is
// returned.
func (w *walk) run(last bool) (string, error) {
	for len(w.rest) > 0 {
		name := w.rest[0]
		w.rest = w.rest[1:]
		top := w.stack[len(w.stack)-1]
		switch name {
		case "", ".":
			continue
		case "..":
			if w.p.NoDotDot {
				return "", fmt.Errorf("%s: .. in a path", w.arg)
			}
			switch {
			case len(w.stack) > 1:
				unix.Close(top.fd) // beyond stack[0], the walk's own
				w.stack = w.stack[:len(w.stack)-1]
			case w.beneath:
				return "", &os.PathError{Op: "open", Path: filepath.Join(top.path, ".."), Err: unix.EXDEV}
			}
			continue
		}
		here := filepath.Join(top.path, name)
		var lst unix.Stat_t
		err := unix.Fstatat(top.fd, name, &lst, unix.AT_SYMLINK_NOFOLLOW)
		if last && len(w.rest) == 0 && (err != nil || lst.Mode&unix.S_IFMT != unix.S_IFLNK) {
			return name, nil // the caller's open says what is there
		}
		if err == unix.ENOENT && w.p.Create {
			if err := unix.Mkdirat(top.fd, name, 0o755); err != nil && err != unix.EEXIST {
				return "", fmt.Errorf("create %s: %w", here, err)
			}
			err = unix.Fstatat(top.fd, name, &lst, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != nil {
			return "", &os.PathError{Op: "open", Path: here, Err: err}
		}
		if lst.Mode&unix.S_IFMT == unix.S_IFLNK {
			target, err := w.follow(top, name, here, &lst)
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(target, "/") {
				if err := w.toRoot(); err != nil {
					return "", err
				}
			}
			w.rest = append(split(target), w.rest...)
			continue
		}
		// O_NOFOLLOW: a link put here since the fstatat fails (ENOTDIR).
		fd, err := OpenAt(top.fd, name, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return "", &os.PathError{Op: "open", Path: here, Err: err}
		}
		w.stack = append(w.stack, frame{Dir: Dir{fd: fd, path: here}, own: true})
		if err := w.visitDir(fd, here); err != nil {
			return "", err
		}
	}
	if last {
		return ".", nil // the path ends on the directory walked last
	}
	return "", nil
}

// follow decides on the link name in top and, when p follows it, reads
// its target.
func (w *walk) follow(top frame, name, here string, lst *unix.Stat_t) (string, error) {
	ok := false
	switch w.p.Follow {
	case FollowAll:
		ok = true
	case FollowRootOwned:
		var dst unix.Stat_t
		ok = lst.Uid == 0 && unix.Fstat(top.fd, &dst) == nil && dst.Uid == 0 && dst.Mode&0o022 == 0
	}
	if !ok {
		return "", &os.PathError{Op: "open", Path: here, Err: unix.ELOOP}
	}
	if w.hops++; w.hops > maxHops {
		return "", &os.PathError{Op: "open", Path: here, Err: unix.ELOOP}
	}
	if w.p.Visit != nil {
		w.p.Visit(Step{Path: here, Link: true, Stat: *lst})
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(top.fd, name, buf)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: here, Err: err}
	}
	return string(buf[:n]), nil
}

func split(p string) []string {
	return strings.Split(strings.Trim(p, "/"), "/")
}
