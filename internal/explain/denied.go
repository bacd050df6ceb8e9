package explain

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/config"
)

// When bm2 sees that a project's account cannot use its working
// directory, script or env_file, it is not always certain: as root it
// takes the account's uid and group (identity.Do), not its supplementary
// groups, and the project's own account has no uid before systemd
// allocates it (it is checked as nobody). What it can be certain of is
// what the mode bits alone decide: a directory on the way that neither
// the account's owner, group nor "other" class may search, no ACL on it,
// on a file system whose permissions are the kernel's. serve refuses
// that (unless --force), and warns of the rest; bm2 check calls the one a
// problem and the other a warning.

// DynamicIDs are the uids and gids systemd gives DynamicUser= accounts
// (61184-65519): a file whose owner or group is in that range may be the
// project's own account's, from an earlier run.
const (
	DynamicIDMin = 61184
	DynamicIDMax = 65519
)

func dynamicID(id int) bool { return id >= DynamicIDMin && id <= DynamicIDMax }

// reach is who a project's instances run as, as far as the file system
// is concerned.
type reach struct {
	// uid is the account's; -1 for the project's own account that systemd
	// has not allocated yet (any uid of DynamicIDs, unknown).
	uid int
	// groups are groups the account certainly runs with.
	groups []int
	// allGroups: groups is every group it runs with (a static account
	// whose groups the user database lists; a dynamic account has only
	// its own, or Group='s).
	allGroups bool
	// unknown: bm2 does not know who it is: nothing is certain.
	unknown bool
}

// projectReach is who p's instances run as: user = (with group = and the
// account's groups, as initgroups gives them to User=), or the project's
// own account (a static account of that name when one exists, else the
// one systemd allocates, with group ='s group or its own).
func projectReach(ctx context.Context, h Host, p *config.Project) reach {
	id, err := h.LookupUser(ctx, p.Account(), p.Group)
	accounts := h.Accounts()
	if err != nil && p.OwnAccount() && !h.IsUser() {
		r := reach{uid: -1, allGroups: true}
		if p.Group != "" {
			if accounts == nil {
				return reach{unknown: true}
			}
			g, err := accounts.Group(p.Group)
			if err != nil {
				return reach{unknown: true}
			}
			r.groups = []int{g.GID}
		}
		return r
	}
	if err != nil {
		return reach{unknown: true}
	}
	r := reach{uid: id.UID, groups: []int{id.GID}}
	if accounts == nil {
		return r
	}
	a, err := accounts.UserID(id.UID)
	if err != nil {
		return r
	}
	gids, err := accounts.GroupIDs(a)
	if err != nil {
		return r
	}
	for _, g := range gids {
		if !slices.Contains(r.groups, g) {
			r.groups = append(r.groups, g)
		}
	}
	r.allGroups = true
	return r
}

// denies tells whether the mode bits of a file (its owner, group and
// mode) certainly keep r from what need asks of it (a permission bit of
// the "other" class: 1 search, 4 read).
func (r reach) denies(uid, gid int, mode os.FileMode, need uint32) bool {
	if r.unknown || r.uid == 0 {
		return false // root may do anything; and whom bm2 does not know, it cannot judge
	}
	perm := uint32(mode.Perm())
	lacks := func(shift uint) bool { return (perm>>shift)&need == 0 }
	switch {
	case r.uid >= 0 && uid == r.uid:
		return lacks(6)
	case r.uid < 0 && dynamicID(uid):
		return false // the owner class may be the account's
	}
	inGroup := slices.Contains(r.groups, gid)
	mayBeInGroup := !r.allGroups || (r.uid < 0 && dynamicID(gid))
	switch {
	case inGroup:
		return lacks(3)
	case mayBeInGroup:
		return lacks(3) && lacks(0)
	}
	return lacks(0)
}

// plainFS are the file systems whose permission checks are the kernel's
// own, from the mode bits and ACLs (not NFS, FUSE, SMB or 9p, whose
// servers decide).
var plainFS = []int64{
	unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
	unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.RAMFS_MAGIC, unix.SQUASHFS_MAGIC,
	0x2fc12fc1, // ZFS
}

// ModeDecides tells whether path's mode bits alone decide who may use
// it: a plain file system, and no access ACL.
func ModeDecides(path string) bool {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil || !slices.Contains(plainFS, int64(fs.Type)) {
		return false
	}
	_, err := unix.Getxattr(path, "system.posix_acl_access", nil)
	return errors.Is(err, unix.ENODATA) || errors.Is(err, unix.ENOTSUP)
}

// surelyDenied tells whether r certainly cannot use path: search every
// directory on the way to it, and search it (dir) or read it. It looks
// only at what it can judge (ModeDecides) and finds a denial certain
// when one of them is.
func surelyDenied(r reach, path string, dir bool) bool {
	if r.unknown || r.uid == 0 || !filepath.IsAbs(path) {
		return false
	}
	path = filepath.Clean(path)
	steps := []string{"/"}
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			steps = append(steps, path[:i])
		}
	}
	if path != "/" {
		steps = append(steps, path)
	}
	for k, step := range steps {
		last := k == len(steps)-1
		need := uint32(1)
		if last && !dir {
			need = 4
		}
		fi, err := os.Stat(step)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || (!last && !fi.IsDir()) {
			return false
		}
		if !ModeDecides(step) {
			continue
		}
		if r.denies(int(st.Uid), int(st.Gid), fi.Mode(), need) {
			return true
		}
	}
	return false
}

// uncertainText is what a warning of a denial bm2 cannot be certain of
// adds: why not.
func (r reach) uncertainText() string {
	if r.uid < 0 {
		return "bm2 cannot be certain: systemd allocates the account when the project starts"
	}
	return "bm2 cannot be certain: the account's groups or an ACL may let it in"
}
