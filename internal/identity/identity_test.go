package identity

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// The lookup finds users and groups by name and by number, and refuses
// names the user database does not know.
func TestLookup(t *testing.T) {
	id, err := Lookup(context.Background(), "root", "")
	if err != nil || id.UID != 0 || id.GID != 0 {
		t.Fatalf("root: %+v %v", id, err)
	}
	id, err = Lookup(context.Background(), "0", "0")
	if err != nil || id.UID != 0 {
		t.Fatalf("0: %+v %v", id, err)
	}
	if _, err := Lookup(context.Background(), "no-such-user-bm2", ""); err == nil {
		t.Fatal("found a user that does not exist")
	}
	if _, err := Lookup(context.Background(), "root", "no-such-group-bm2"); err == nil {
		t.Fatal("found a group that does not exist")
	}
}

// Do acts as the identity on its own thread only, and refuses without
// root rather than acting as the caller.
func TestDo(t *testing.T) {
	dir, err := os.MkdirTemp("", "bm2-identity-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if os.Geteuid() != 0 {
		err := Do(Identity{UID: os.Geteuid() + 1, GID: os.Getegid()}, func() error { return nil })
		if err == nil {
			t.Fatal("took another identity without root")
		}
		return
	}
	os.Chmod(dir, 0o777)
	err = Do(Identity{UID: 65534, GID: 65534}, func() error {
		return os.WriteFile(dir+"/as-nobody", nil, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(dir + "/as-nobody")
	if st.Sys().(*syscall.Stat_t).Uid != 65534 {
		t.Fatalf("file created as nobody is owned by %d", st.Sys().(*syscall.Stat_t).Uid)
	}
	os.WriteFile(dir+"/as-root", nil, 0o600)
	if err := Do(Identity{UID: 65534, GID: 65534}, func() error { _, err := os.ReadFile(dir + "/as-root"); return err }); !os.IsPermission(err) {
		t.Fatalf("nobody read root's 0600 file: %v", err)
	}
	if _, err := os.ReadFile(dir + "/as-root"); err != nil {
		t.Fatalf("the rest of the process lost root: %v", err)
	}
}
