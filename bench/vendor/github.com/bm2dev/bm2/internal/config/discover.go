package config

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/bm2dev/bm2/internal/safefs"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/bm2dev/bm2/internal/parallel"
	"golang.org/x/sys/unix"
)

// DefaultSearchPath is where project files are looked for, highest priority
// first: the administrator's /etc, runtime files in /run, then files shipped
// by local installs and by packages.
var DefaultSearchPath = []string{"/etc/bm2", "/run/bm2", "/usr/local/lib/bm2", "/usr/lib/bm2"}

// SearchPathEnv names the variable that replaces the search path
// (colon-separated directories), for tests and debugging.
const SearchPathEnv = "BM2_CONFIG_PATH"

// SearchPath returns the directories to read, from $BM2_CONFIG_PATH when set
// (getenv is os.Getenv in production).
func SearchPath(getenv func(string) string) []string {
	if v := getenv(SearchPathEnv); v != "" {
		var dirs []string
		for _, d := range strings.Split(v, ":") {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
		return dirs
	}
	return append([]string(nil), DefaultSearchPath...)
}

// Source is one project file found along the search path, read into
// memory, with its private part.
type Source struct {
	Path string
	Data []byte
	Mode fs.FileMode // of the project file; 0 when unknown

	PrivatePath   string // PrivatePath(Path)
	PrivateData   []byte // nil when there is none
	PrivateErr    error  // the private part exists but must not be used (owner, mode)
	PrivateUnread bool   // the private part may exist, but this process cannot read it
}

// Name is the project name the file implies.
func (s Source) Name() string { return Stem(s.Path) }

// Found is the result of reading the search path.
type Found struct {
	Sources []Source // one per project name, sorted by name
	Masked  []string // paths of files that mask a project (empty or -> /dev/null)
	Shadow  []string // paths hidden by a file of the same name earlier in the path
	Errors  []error  // unreadable directories or files; each names its path
}

// Discover reads every *.toml file along dirs. The first file of a given name
// wins; a missing directory is not an error. Files that are not regular files
// (after following symlinks), files whose name is not a valid project name
// and unreadable files are reported in Errors and skipped; they never stop
// the others from being read.
func Discover(dirs []string) Found { return discover(dirs, -1) }

// DiscoverOwned is Discover for user scope: the directories and every
// project file must be the user's (uid) or root's, and writable by their
// owner alone; whatever else could write them could make the user's
// manager run its code as the user. A directory that fails is reported
// and not read; a file that fails is reported and skipped.
func DiscoverOwned(dirs []string, uid int) Found { return discover(dirs, uid) }

// Owned checks that path is owned by uid or root and that no one else may
// write it (no group or other write bit), without following a final
// symbolic link.
func Owned(path string, uid int) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: cannot tell its owner", path)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: bm2 reads only your own directories and files there (replace it with the directory itself)", path)
	}
	if (sys.Uid != 0 && int(sys.Uid) != uid) || st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s must be yours (uid %d) and writable by you alone, but it is uid %d, mode %v (chown %d: %s; chmod go-w %s)",
			path, uid, sys.Uid, st.Mode().Perm(), uid, path, path)
	}
	return nil
}

func discover(dirs []string, owner int) Found {
	var f Found
	// First the names, in search-path order (the first of a name wins);
	// then the files, read in parallel, each into its own Found, merged
	// in that order: the same result as reading them one by one.
	type candidate struct {
		path   string
		isLink bool
		priv   *dirStat // of the directory's private/, shared by its files
	}
	var files []candidate
	var dirErrs []int // len(files) when each of f.Errors was found, to keep the order
	seen := make(map[string]bool)
	for _, dir := range dirs {
		if owner >= 0 {
			err := ownedPath(dir, owner)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				f.Errors = append(f.Errors, err)
				dirErrs = append(dirErrs, len(files))
				continue
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				f.Errors = append(f.Errors, fmt.Errorf("%s: %w", dir, err))
				dirErrs = append(dirErrs, len(files))
			}
			continue
		}
		var priv *dirStat
		for _, e := range entries { // ReadDir sorts by name
			if !strings.HasSuffix(e.Name(), ".toml") || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			name := Stem(p)
			if seen[name] {
				f.Shadow = append(f.Shadow, p)
				continue
			}
			seen[name] = true
			if priv == nil {
				priv = lstatDir(filepath.Join(dir, "private"))
			}
			files = append(files, candidate{p, e.Type()&fs.ModeSymlink != 0, priv})
		}
	}
	read := make([]Found, len(files))
	parallel.For(len(files), 32, func(i int) {
		p, isLink := files[i].path, files[i].isLink
		if owner >= 0 {
			target := p
			if isLink {
				if t, err := os.Readlink(p); err == nil && t == os.DevNull {
					target = "" // a mask
				} else if target, err = filepath.EvalSymlinks(p); err != nil {
					target = p // add reports it
				}
			}
			if err := ownedTarget(target, owner); err != nil {
				read[i].Errors = append(read[i].Errors, &Error{File: p, Msg: err.Error(), Err: ErrValue})
				return
			}
		}
		read[i].add(p, isLink, files[i].priv)
	})
	errs := f.Errors
	f.Errors = nil
	for i, r := range read {
		for len(dirErrs) > 0 && dirErrs[0] == i {
			f.Errors, errs, dirErrs = append(f.Errors, errs[0]), errs[1:], dirErrs[1:]
		}
		f.Sources = append(f.Sources, r.Sources...)
		f.Masked = append(f.Masked, r.Masked...)
		f.Errors = append(f.Errors, r.Errors...)
	}
	f.Errors = append(f.Errors, errs...)
	sort.Slice(f.Sources, func(i, j int) bool { return f.Sources[i].Name() < f.Sources[j].Name() })
	return f
}

// DiscoverOne is Discover for one project: the first <name>.toml along
// dirs, read and checked as Discover does (a mask or a broken file gives
// no source). It reads nothing else.
func DiscoverOne(dirs []string, name string) (Source, bool) {
	for _, dir := range dirs {
		p := filepath.Join(dir, name+".toml")
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		var f Found
		f.add(p, st.Mode()&fs.ModeSymlink != 0, nil)
		if len(f.Sources) == 1 {
			return f.Sources[0], true
		}
		return Source{}, false // the first one of that name decides
	}
	return Source{}, false
}

// ownedTarget is Owned for a project file ("" for none).
func ownedTarget(p string, uid int) error {
	if p == "" {
		return nil
	}
	return Owned(p, uid)
}

// ownedPath checks dir and the directories above it up to the first one
// root owns (a home, /home): each must be the user's or root's and
// writable by its owner alone.
func ownedPath(dir string, uid int) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		st, err := os.Lstat(d)
		if err != nil {
			return err
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if ok && sys.Uid == 0 && st.IsDir() {
			// root's: others may write it only if the sticky bit keeps
			// them from replacing what is in it (/tmp).
			if st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0 {
				return fmt.Errorf("%s must be writable by its owner alone (it is root's, mode %v): bm2 reads only directories no one else can change", d, st.Mode().Perm())
			}
			return nil
		}
		if err := Owned(d, uid); err != nil {
			return err
		}
		if d == "/" {
			return nil
		}
	}
}

// ValidName tells whether s can be a project's name: 1 to 64 of a-z,
// 0-9, '-' and '_', starting with a letter or digit.
func ValidName(s string) bool { return nameRE.MatchString(s) && len(s) <= maxNameLen }

// add reads one project file found at p (isLink: the directory entry is
// a symbolic link) into the sources, the masks or the errors.
//
// priv is the Lstat of the file's private/ directory, when the caller
// took it already; nil takes it here.
func (f *Found) add(p string, isLink bool, priv *dirStat) {
	name := Stem(p)
	if !ValidName(name) {
		f.Errors = append(f.Errors, &Error{File: p, Msg: fmt.Sprintf("%q is not a valid project name: use 1 to %d of a-z, 0-9, '-' and '_', starting with a letter or digit", name, maxNameLen), Err: ErrValue})
		return
	}
	if isLink {
		if target, err := os.Readlink(p); err == nil && target == os.DevNull {
			f.Masked = append(f.Masked, p)
			return
		}
	}
	st, err := os.Stat(p)
	if err != nil {
		f.Errors = append(f.Errors, fmt.Errorf("%s: %w", p, err))
		return
	}
	if !st.Mode().IsRegular() {
		f.Errors = append(f.Errors, &Error{File: p, Msg: "not a regular file", Err: ErrValue})
		return
	}
	data, err := readFile(p, st.Size(), true)
	if err != nil {
		f.Errors = append(f.Errors, fmt.Errorf("%s: %w", p, err))
		return
	}
	if len(bytes.TrimSpace(data)) == 0 {
		f.Masked = append(f.Masked, p)
		return
	}
	f.Sources = append(f.Sources, readPrivate(Source{Path: p, Data: data, Mode: st.Mode()}, priv))
}

// readFile is os.ReadFile of a file that stat found to be size bytes
// long: open (with the extra flags), read, close, without what os.File
// adds for files that may block (the runtime poller's system calls, six
// per file), which only costs time with a thousand project files.
func readFile(p string, size int64, follow bool) ([]byte, error) {
	var fd int
	var err error
	if follow {
		fd, err = unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	} else {
		fd, err = safefs.OpenAt(unix.AT_FDCWD, p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	// One more byte than stat said, so that the read which finds the end
	// needs no larger buffer; a file that grew since stat still reads whole.
	buf := make([]byte, 0, max(size, 0)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: p, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// dirStat is os.Lstat of a directory, taken once for every project file
// that shares it (their private/ directory).
type dirStat struct {
	st  fs.FileInfo
	err error
}

func lstatDir(dir string) *dirStat {
	st, err := os.Lstat(dir)
	return &dirStat{st, err}
}

// readPrivate reads a project's private part. It must be a regular file
// (not a symlink) owned by root and readable by nobody else, in a
// directory that is root's too; otherwise it is not used, and the project
// is refused with the reason (a secret that others may read, or may swap,
// is not one). A process that may not look into the directory (a normal
// user running bm2 list) reads the project without it.
func readPrivate(s Source, priv *dirStat) Source {
	s.PrivatePath = PrivatePath(s.Path)
	dir := filepath.Dir(s.PrivatePath)
	if priv == nil {
		priv = lstatDir(dir)
	}
	dst, err := priv.st, priv.err
	if errors.Is(err, fs.ErrNotExist) {
		return s
	}
	owner, chown := ownerWords()
	if err == nil && (!dst.IsDir() || !rootOwned(dst) || dst.Mode().Perm()&0o022 != 0) {
		s.PrivateErr = fmt.Errorf("%s must be a directory owned by %s that only %s can write (chown %s %s; chmod 0700 %s)", dir, owner, owner, chown, dir, dir)
		return s
	}
	st, err := os.Lstat(s.PrivatePath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s
	case errors.Is(err, fs.ErrPermission):
		s.PrivateUnread = true
		return s
	case err != nil:
		s.PrivateErr = err
		return s
	case !st.Mode().IsRegular():
		s.PrivateErr = errors.New("must be a regular file (not a symbolic link)")
		return s
	case !rootOwned(st) || st.Mode().Perm()&0o077 != 0:
		s.PrivateErr = fmt.Errorf("holds secrets, so it must be owned by %s and readable by %s alone, but it is %s (chown %s %s; chmod 0600 %s)",
			owner, owner, st.Mode().Perm(), chown, s.PrivatePath, s.PrivatePath)
		return s
	}
	// Not following: a link put in its place since the Lstat is not read.
	data, err := readFile(s.PrivatePath, st.Size(), false)
	switch {
	case errors.Is(err, fs.ErrPermission):
		s.PrivateUnread = true
	case err != nil:
		s.PrivateErr = err
	default:
		s.PrivateData = data
	}
	return s
}

// rootOwned tells whether root owns a file, or, for a process that is not
// root (user scope: the user generator, bm2 run by a user), root or the
// process's own user: a user's secrets are theirs.
func rootOwned(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && (sys.Uid == 0 || int(sys.Uid) == os.Geteuid())
}

// ownerWords names who must own private parts, for messages: root, or
// the calling user; and the chown argument that makes it so.
func ownerWords() (owner, chown string) {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Sprintf("you (uid %d)", uid), fmt.Sprintf("%d:", uid)
	}
	return "root", "root:"
}

// Entry is one project found along the search path.
type Entry struct {
	Name    string
	Path    string
	Project *Project // nil when the file is invalid; set, but refused, on a port conflict
	Err     error    // why the project has no units: Errors, *ConflictError or a read error
}

// Loaded is every project along the search path, as the generator sees
// them.
type Loaded struct {
	Entries []Entry // by name: valid, invalid and refused
	Masked  []string
	Shadow  []string
	Errors  []error // directories that cannot be read
}

// Find returns the entry of a project name.
func (l Loaded) Find(name string) (Entry, bool) {
	for _, e := range l.Entries {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Load is Discover and Resolve: every project along dirs, parsed, with the
// port conflicts decided as the generator decides them.
func Load(dirs []string, opts Options) Loaded {
	found := Discover(dirs)
	if opts.User != nil {
		found = DiscoverOwned(dirs, os.Geteuid())
	}
	l := Resolve(found.Sources, opts)
	l.Masked, l.Shadow = found.Masked, found.Shadow
	// Files that are not projects at all (bad names, not regular files)
	// but name a file still get an entry; directories only an error.
	for _, err := range found.Errors {
		var ce *Error
		if errors.As(err, &ce) && ce.File != "" {
			l.Entries = append(l.Entries, Entry{Name: Stem(ce.File), Path: ce.File, Err: err})
		} else {
			l.Errors = append(l.Errors, err)
		}
	}
	sort.SliceStable(l.Entries, func(i, j int) bool { return l.Entries[i].Name < l.Entries[j].Name })
	return l
}

// Resolve parses sources and decides which projects keep their port
// ranges (ResolveConflicts). It does no I/O.
func Resolve(sources []Source, opts Options) Loaded {
	var l Loaded
	l.Entries = make([]Entry, len(sources))
	parallel.For(len(sources), 16, func(i int) { // each file on its own
		src := sources[i]
		e := Entry{Name: src.Name(), Path: src.Path}
		e.Project, e.Err = ParseSource(src, opts)
		l.Entries[i] = e
	})
	var parsed []*Project
	for _, e := range l.Entries {
		if e.Err == nil {
			parsed = append(parsed, e.Project)
		}
	}
	_, refused := ResolveConflicts(parsed)
	if len(refused) > 0 {
		byName := make(map[string][]int, len(l.Entries))
		for i, e := range l.Entries {
			byName[e.Name] = append(byName[e.Name], i)
		}
		for _, c := range refused {
			for _, i := range byName[c.Project] {
				l.Entries[i].Err = c
			}
		}
	}
	sort.SliceStable(l.Entries, func(i, j int) bool { return l.Entries[i].Name < l.Entries[j].Name })
	return l
}
