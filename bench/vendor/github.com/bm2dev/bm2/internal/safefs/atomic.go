package safefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// TempPrefix starts the temporary name of a file while Write writes it.
const TempPrefix = ".#"

// tempName is the temporary name of path while it is written: same
// directory (rename(2) must not cross file systems), hidden, and fixed, so
// that a file left behind by a crash is replaced by the next attempt
// rather than piling up.
func tempName(path string) string {
	return filepath.Join(filepath.Dir(path), TempPrefix+filepath.Base(path))
}

// Write replaces path with data, atomically and durably (see the package
// comment). The file gets mode perm whatever the umask. The directories
// on the way are resolved by the kernel; in a directory someone else may
// write, walk to it and use [Dir.Write].
func Write(path string, data []byte, perm os.FileMode) error {
	if err := writeTemp(unix.AT_FDCWD, "", path, data, perm, true); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// Write is [Write] in d: name is one component, created as the caller
// (run it inside identity.Do to create it as a user).
func (d *Dir) Write(name string, data []byte, perm os.FileMode) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return &fs.PathError{Op: "write", Path: filepath.Join(d.path, name), Err: unix.EINVAL}
	}
	if err := writeTemp(d.fd, d.path, name, data, perm, true); err != nil {
		return err
	}
	return d.Sync()
}

// Sync makes d's entries (a rename, a removal) durable.
func (d *Dir) Sync() error {
	// An O_PATH descriptor cannot be synced: the directory itself, opened
	// for reading through it.
	fd, err := OpenAt(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	return syncFd(fd, d.path)
}

// Symlink replaces path with a symbolic link to target, atomically and
// durably.
func Symlink(target, path string) error {
	if err := symlinkTemp(target, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// umask is the process's umask, read once (reading it means setting it).
var umask = sync.OnceValue(func() os.FileMode {
	m := unix.Umask(0)
	unix.Umask(m)
	return os.FileMode(m)
})

// fill writes data to the new file fd, gives it perm where the umask
// took bits away at open, syncs it when asked, and closes it.
func fill(fd int, data []byte, perm os.FileMode, sync bool) error {
	var err error
	for len(data) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, data)
		data = data[n:]
	}
	if err == nil && perm.Perm()&umask() != 0 {
		err = unix.Fchmod(fd, uint32(perm.Perm()))
	}
	if err == nil && sync {
		err = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// writeTemp does steps 1 to 3 for one file, name in the directory dfd
// (unix.AT_FDCWD: name is a path), which errors call dir; sync false
// skips the fsync (a file system that keeps nothing across a reboot:
// tmpfs).
func writeTemp(dfd int, dir, name string, data []byte, perm os.FileMode, sync bool) error {
	tmp := tempName(name)
	fd, err := openExcl(dfd, tmp, perm)
	if err != nil {
		return &fs.PathError{Op: "create", Path: filepath.Join(dir, tmp), Err: err}
	}
	err = fill(fd, data, perm, sync)
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return &fs.PathError{Op: "write", Path: filepath.Join(dir, name), Err: err}
	}
	if err := unix.Renameat(dfd, tmp, dfd, name); err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return &fs.PathError{Op: "rename", Path: filepath.Join(dir, name), Err: err}
	}
	return nil
}

// openExcl creates name in dfd, never following a symlink and never
// opening a file that exists; a stale temporary file of an interrupted run
// is removed and the creation tried once more.
func openExcl(dfd int, name string, perm os.FileMode) (int, error) {
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL
	fd, err := OpenAt(dfd, name, flags, uint32(perm.Perm()))
	if err == unix.EEXIST {
		_ = unix.Unlinkat(dfd, name, 0)
		fd, err = OpenAt(dfd, name, flags, uint32(perm.Perm()))
	}
	return fd, err
}

func symlinkTemp(target, path string) error {
	tmp := tempName(path)
	err := unix.Symlink(target, tmp)
	if err == unix.EEXIST {
		_ = unix.Unlink(tmp)
		err = unix.Symlink(target, tmp)
	}
	if err != nil {
		return &fs.PathError{Op: "symlink", Path: tmp, Err: err}
	}
	if err := unix.Rename(tmp, path); err != nil {
		_ = unix.Unlink(tmp)
		return &fs.PathError{Op: "rename", Path: path, Err: err}
	}
	return nil
}

// SyncDir makes the entries of a directory (a rename, a removal) durable.
func SyncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return syncFd(fd, dir)
}

// syncFd fsyncs and closes the directory fd.
func syncFd(fd int, dir string) error {
	err := unix.Fsync(fd)
	unix.Close(fd)
	if err != nil && err != unix.EINVAL { // some file systems cannot sync a directory
		return &fs.PathError{Op: "fsync", Path: dir, Err: err}
	}
	return nil
}

// Remove deletes path, durably; a path that does not exist is not an error.
func Remove(path string) error {
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// CreateExclusive creates path with data unless it exists already, in one
// step: the content is written and synced under a temporary name and then
// linked into place with link(2), which fails when path exists. It reports
// whether this call created the file (the first of several racing callers
// wins; the others get false).
func CreateExclusive(path string, data []byte, perm os.FileMode) (bool, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), TempPrefix+filepath.Base(path)+".")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, SyncDir(filepath.Dir(path))
}

// Batch writes many files atomically and syncs each directory once. On a
// file system that keeps nothing across a reboot (tmpfs, ramfs: a
// generator's output in /run) it syncs nothing, since there is nothing to
// make durable. It is not safe for concurrent use; use one per goroutine.
type Batch struct {
	dirs     map[string]struct{}
	volatile *bool // decided at the first write
}

// Write is [Write] without the directory sync, which Sync does.
func (b *Batch) Write(path string, data []byte, perm os.FileMode) error {
	b.touch(path)
	return writeTemp(unix.AT_FDCWD, "", path, data, perm, !*b.volatile)
}

// Symlink is [Symlink] without the directory sync, which Sync does.
func (b *Batch) Symlink(target, path string) error {
	b.touch(path)
	return symlinkTemp(target, path)
}

func (b *Batch) touch(path string) {
	if b.volatile == nil {
		v := isVolatile(filepath.Dir(path))
		b.volatile = &v
	}
	if *b.volatile {
		return
	}
	if b.dirs == nil {
		b.dirs = make(map[string]struct{})
	}
	b.dirs[filepath.Dir(path)] = struct{}{}
}

// isVolatile tells tmpfs and ramfs, whose contents end with the boot.
func isVolatile(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	return st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC
}

// Sync syncs every directory written to since the last Sync, in a fixed
// order, and reports every failure.
func (b *Batch) Sync() error {
	dirs := make([]string, 0, len(b.dirs))
	for d := range b.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var errs []error
	for _, d := range dirs {
		errs = append(errs, SyncDir(d))
	}
	b.dirs = nil
	return errors.Join(errs...)
}

// CreateAt creates name (a path relative to dfd, whose directories the
// kernel resolves) with data and mode perm whatever the umask, in place:
// O_CREAT|O_EXCL|O_NOFOLLOW, so it never opens, replaces or follows
// anything that is there already (the error is then EEXIST, see
// [IsExist]). It is for a directory that was empty when its writer began
// and that nobody reads until the writer is done, such as a systemd
// generator's output directory, which systemd empties before it runs
// its generators and reads once they have exited: there is no old file
// to replace atomically, and no temporary name and rename(2) is needed.
// It does not fsync; use it on a file system that keeps nothing across a
// reboot (tmpfs), or sync yourself. On failure nothing is left at name
// unless it was there before. dir names dfd in errors.
func CreateAt(dfd int, dir, name string, data []byte, perm os.FileMode) error {
	fd, err := OpenAt(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, uint32(perm.Perm()))
	if err != nil {
		return &fs.PathError{Op: "create", Path: filepath.Join(dir, name), Err: err}
	}
	if err := fill(fd, data, perm, false); err != nil {
		_ = unix.Unlinkat(dfd, name, 0)
		return &fs.PathError{Op: "write", Path: filepath.Join(dir, name), Err: err}
	}
	return nil
}

// SymlinkAt is [CreateAt] for a symbolic link to target: symlinkat(2),
// which never replaces anything (EEXIST).
func SymlinkAt(target string, dfd int, dir, name string) error {
	if err := unix.Symlinkat(target, dfd, name); err != nil {
		return &fs.PathError{Op: "symlink", Path: filepath.Join(dir, name), Err: err}
	}
	return nil
}

// IsExist tells whether CreateAt or SymlinkAt failed because something
// is at the name already.
func IsExist(err error) bool { return errors.Is(err, unix.EEXIST) }
