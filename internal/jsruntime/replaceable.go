package jsruntime

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// NotRunError is an Asker's answer when it would not run the runtime at
// all: root runs no binary another user can replace. Check takes it for
// a runtime that is there and whose version is left to the run wrapper
// (Result.Unchecked), not for a problem.
type NotRunError struct{ Why string }

func (e *NotRunError) Error() string { return e.Why }

// Replaceable tells whether someone other than root can replace what
// running path would execute: the file, the target of any link on the
// way, or a directory above either, being owned by another user, or
// writable by a group other than root's or by everyone (a sticky
// directory, /tmp, only protects what root owns in it). who names that
// someone for a person: "alice (uid 1000)", "group staff (gid 50)",
// "every user". A path that cannot be examined counts as replaceable.
func Replaceable(path string) (who string, replaceable bool) {
	if !filepath.IsAbs(path) {
		return "whoever controls the working directory", true
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Sprintf("someone (%s cannot be examined: %v)", path, err), true
	}
	// Every link of the chain, one hop at a time (a link in the middle,
	// someone else's, could be re-pointed), then the resolved file.
	cur := filepath.Clean(path)
	for hop := 0; ; hop++ {
		if who, ok := chainReplaceable(cur); ok {
			return who, true
		}
		fi, err := os.Lstat(cur)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		if hop == maxHops {
			return fmt.Sprintf("someone (%s: more than %d links)", path, maxHops), true
		}
		target, err := os.Readlink(cur)
		if err != nil {
			return fmt.Sprintf("someone (%s cannot be examined: %v)", cur, err), true
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(cur), target)
		}
		cur = filepath.Clean(target)
	}
	if who, ok := chainReplaceable(real); ok {
		return who, true
	}
	return "", false
}

// maxHops bounds a chain of links, as the kernel does (40).
const maxHops = 40

// chainReplaceable checks path itself (not followed) and every directory
// above it.
func chainReplaceable(path string) (string, bool) {
	p := filepath.Clean(path)
	var child *syscall.Stat_t
	for {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			if errors.Is(err, os.ErrNotExist) && child == nil {
				// A link's own path was checked through its target; a
				// missing file is Check's to report.
				return "", false
			}
			return fmt.Sprintf("someone (%s cannot be examined: %v)", p, err), true
		}
		isLink := st.Mode&syscall.S_IFMT == syscall.S_IFLNK
		switch {
		case st.Uid != 0:
			return userName(st.Uid), true
		case st.Mode&0o002 != 0 && !isLink && !(st.Mode&syscall.S_ISVTX != 0 && child != nil && child.Uid == 0):
			return "every user", true
		case st.Mode&0o020 != 0 && st.Gid != 0 && !isLink && !(st.Mode&syscall.S_ISVTX != 0 && child != nil && child.Uid == 0):
			return groupName(st.Gid), true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", false
		}
		s := st
		child, p = &s, parent
	}
}

func userName(uid uint32) string {
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

func groupName(gid uint32) string {
	if g, err := user.LookupGroupId(strconv.Itoa(int(gid))); err == nil {
		return fmt.Sprintf("group %s (gid %d)", g.Name, gid)
	}
	return fmt.Sprintf("gid %d", gid)
}
