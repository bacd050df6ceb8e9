package identity

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Nobody is the unprivileged account: who runs what no single user
// speaks for.
var Nobody = Identity{Name: "nobody", UID: 65534, GID: 65534}

// Identity is a user by number.
type Identity struct {
	Name     string // for messages; may be ""
	UID, GID int
}

func (id Identity) String() string {
	if id.Name != "" {
		return id.Name
	}
	return "uid " + strconv.Itoa(id.UID)
}

// Self is the calling process's effective identity.
func Self() Identity { return Identity{UID: unix.Geteuid(), GID: unix.Getegid()} }

// ErrNotPermitted means the caller could not take the identity: only root
// can. Callers say so; they never act as somebody else instead.
var ErrNotPermitted = errors.New("acting as another user needs root")

// Do runs fn as id, on a locked OS thread of its own whose filesystem UID
// and GID are switched. The thread is never unlocked, so the Go runtime
// discards it when fn returns and no other goroutine ever runs with the
// borrowed identity. When the caller is id already, fn runs directly.
func Do(id Identity, fn func() error) error {
	if id.UID == unix.Geteuid() && id.GID == unix.Getegid() {
		return fn()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // no Unlock: the thread dies with the goroutine
		// setfsgid/setfsuid return the previous id and report no error;
		// asking again with -1 reads the current one back.
		unix.RawSyscall(unix.SYS_SETFSGID, uintptr(id.GID), 0, 0)
		unix.RawSyscall(unix.SYS_SETFSUID, uintptr(id.UID), 0, 0)
		fsuid, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, ^uintptr(0), 0, 0)
		fsgid, _, _ := unix.RawSyscall(unix.SYS_SETFSGID, ^uintptr(0), 0, 0)
		if int(fsuid) != id.UID || int(fsgid) != id.GID {
			done <- fmt.Errorf("take the identity of %s: %w", id, ErrNotPermitted)
			return
		}
		done <- fn()
	}()
	return <-done
}

// LookupUser resolves a user name (or number, as systemd's User= allows)
// and, when group is not "", a group, through the system's user database:
// os/user, which uses NSS in a cgo build, and getent(1) when that cannot
// answer (a build without cgo reads only /etc/passwd, which misses LDAP,
// sssd and systemd's dynamic users).
//
// bm2-probe never needs it: it asks systemd for the UID and GID an
// instance really runs with.
func Lookup(ctx context.Context, name, group string) (Identity, error) {
	id := Identity{Name: name}
	u, err := lookupPasswd(ctx, name)
	if err != nil {
		return Identity{}, err
	}
	id.UID, id.GID = u[0], u[1]
	if group != "" {
		gid, err := lookupGroup(ctx, group)
		if err != nil {
			return Identity{}, err
		}
		id.GID = gid
	}
	return id, nil
}

func lookupPasswd(ctx context.Context, name string) ([2]int, error) {
	_, uid, gid, err := LookupAccount(ctx, name)
	return [2]int{uid, gid}, err
}

// LookupAccount resolves a user name, or a number as systemd's User=
// takes it, to the account's name, uid and primary gid: through os/user
// (NSS in a cgo build), then getent(1) for what that cannot answer.
func LookupAccount(ctx context.Context, name string) (string, int, int, error) {
	var u *user.User
	var err error
	if _, nerr := strconv.Atoi(name); nerr == nil {
		u, err = user.LookupId(name)
	} else {
		u, err = user.Lookup(name)
	}
	if err == nil {
		uid, e1 := strconv.Atoi(u.Uid)
		gid, e2 := strconv.Atoi(u.Gid)
		if e1 == nil && e2 == nil {
			return u.Username, uid, gid, nil
		}
	}
	// passwd lines: name:x:uid:gid:gecos:home:shell
	f, gerr := Getent(ctx, "passwd", name)
	if gerr == nil && len(f) >= 4 {
		uid, e1 := strconv.Atoi(f[2])
		gid, e2 := strconv.Atoi(f[3])
		if e1 == nil && e2 == nil {
			return f[0], uid, gid, nil
		}
	}
	return "", 0, 0, fmt.Errorf("no such user %q in the user database", name)
}

func lookupGroup(ctx context.Context, name string) (int, error) {
	var g *user.Group
	var err error
	if _, nerr := strconv.Atoi(name); nerr == nil {
		g, err = user.LookupGroupId(name)
	} else {
		g, err = user.LookupGroup(name)
	}
	if err == nil {
		if gid, err := strconv.Atoi(g.Gid); err == nil {
			return gid, nil
		}
	}
	f, gerr := Getent(ctx, "group", name)
	if gerr == nil && len(f) >= 3 {
		if gid, err := strconv.Atoi(f[2]); err == nil {
			return gid, nil
		}
	}
	return 0, fmt.Errorf("no such group %q in the group database", name)
}

// Getent runs getent(1) with a fixed environment and returns the fields
// of the entry it prints: the user and group database as NSS sees it,
// for what os/user cannot answer (LDAP, sssd, dynamic users without cgo).
func Getent(ctx context.Context, db, key string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "getent", db, key)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	if !sc.Scan() {
		return nil, errors.New("no entry")
	}
	return strings.Split(sc.Text(), ":"), nil
}
