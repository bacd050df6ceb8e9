package trust

import (
	"context"
	"fmt"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/identity"
)

// Account is a user of the user database.
type Account struct {
	Name     string
	UID, GID int // GID: the primary group
}

// Group is a group of the group database.
type Group struct {
	Name    string
	GID     int
	Members []string // its listed (supplementary) members; nil when not known
}

// Accounts is the user and group database the policy asks. System is the
// host's; tests pass a table.
type Accounts interface {
	// User resolves a user name, or a number as systemd's User= takes it.
	User(name string) (Account, error)
	// UserID resolves a uid.
	UserID(uid int) (Account, error)
	// Group resolves a group name, or a number as Group= takes it.
	Group(name string) (Group, error)
	// GroupID resolves a gid.
	GroupID(gid int) (Group, error)
	// GroupIDs is every group a user is in: the primary group and the
	// supplementary groups (as initgroups gives them to User=).
	GroupIDs(a Account) ([]int, error)
}

// System is the host's user and group database: os/user (NSS in a cgo
// build, /etc/passwd and /etc/group otherwise), and getent(1) and id(1)
// for what that cannot answer (LDAP, sssd, systemd's dynamic users in a
// build without cgo).
func System() Accounts { return systemAccounts{} }

type systemAccounts struct{}

func (systemAccounts) User(name string) (Account, error) {
	n, uid, gid, err := identity.LookupAccount(context.Background(), name)
	if err != nil {
		return Account{}, err
	}
	return Account{Name: n, UID: uid, GID: gid}, nil
}

func (s systemAccounts) UserID(uid int) (Account, error) { return s.User(strconv.Itoa(uid)) }

func (systemAccounts) Group(name string) (Group, error) {
	var g *user.Group
	var err error
	if _, nerr := strconv.Atoi(name); nerr == nil {
		g, err = user.LookupGroupId(name)
	} else {
		g, err = user.LookupGroup(name)
	}
	// name:x:gid:members, for the members os/user does not give.
	f, gerr := getent("group", name)
	var members []string
	if gerr == nil && len(f) >= 4 && f[3] != "" {
		members = strings.Split(f[3], ",")
	}
	if err == nil {
		if gid, err := strconv.Atoi(g.Gid); err == nil {
			return Group{Name: g.Name, GID: gid, Members: members}, nil
		}
	}
	if gerr == nil && len(f) >= 3 {
		if gid, err := strconv.Atoi(f[2]); err == nil {
			return Group{Name: f[0], GID: gid, Members: members}, nil
		}
	}
	return Group{}, fmt.Errorf("no such group %q in the group database", name)
}

func (s systemAccounts) GroupID(gid int) (Group, error) { return s.Group(strconv.Itoa(gid)) }

func (systemAccounts) GroupIDs(a Account) ([]int, error) {
	if u, err := user.LookupId(strconv.Itoa(a.UID)); err == nil {
		if ids, err := u.GroupIds(); err == nil {
			return withPrimary(a.GID, ids)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "id", "-G", "--", a.Name)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the groups of %s: %w", a.Name, err)
	}
	return withPrimary(a.GID, strings.Fields(string(out)))
}

func withPrimary(primary int, ids []string) ([]int, error) {
	out := []int{primary}
	for _, s := range ids {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("group id %q", s)
		}
		if n != primary {
			out = append(out, n)
		}
	}
	return out, nil
}

// getent is identity.Getent, bounded by its own 5 s.
func getent(db, key string) ([]string, error) {
	return identity.Getent(context.Background(), db, key)
}
