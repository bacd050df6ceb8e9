package explain

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bm2dev/bm2/internal/testutil"
)

// What the mode bits alone decide, for each kind of account.
func TestReachDenies(t *testing.T) {
	const search = 1
	bob := reach{uid: 1001, groups: []int{1001, 50}, allGroups: true}
	carol := reach{uid: 1002, groups: []int{1002}} // her other groups are not known
	dynamic := reach{uid: -1, allGroups: true}
	dynamicWWW := reach{uid: -1, groups: []int{33}, allGroups: true}
	for _, c := range []struct {
		name     string
		r        reach
		uid, gid int
		mode     os.FileMode
		want     bool
	}{
		{"root owns it, 0700: bob is other", bob, 0, 0, 0o700, true},
		{"root owns it, 0701: other may search", bob, 0, 0, 0o701, false},
		{"bob owns it, 0700", bob, 1001, 0, 0o700, false},
		{"bob owns it, 0070: the owner class decides", bob, 1001, 50, 0o070, true},
		{"group 50, 0750: bob is in it", bob, 0, 50, 0o750, false},
		{"group 50, 0705: the group class decides", bob, 0, 50, 0o705, true},
		{"group 50, 0750: carol may be in it", carol, 0, 50, 0o750, false},
		{"group 50, 0700: no class lets carol in", carol, 0, 50, 0o700, true},
		{"the account is root", reach{uid: 0}, 1000, 1000, 0o700, false},
		{"the account is not known", reach{unknown: true}, 1000, 1000, 0o700, false},
		{"alice's home, 0750: the allocated account is other", dynamic, 1000, 1000, 0o750, true},
		{"alice's home, 0751", dynamic, 1000, 1000, 0o751, false},
		{"owned by a dynamic uid, 0700: maybe the account's own", dynamic, 61300, 61300, 0o700, false},
		{"grouped with a dynamic gid, 0750: maybe its group", dynamic, 0, 61300, 0o750, false},
		{"grouped with a dynamic gid, 0700", dynamic, 0, 61300, 0o700, true},
		{"group = www-data, 0750", dynamicWWW, 0, 33, 0o750, false},
		{"group = www-data, 0700", dynamicWWW, 0, 33, 0o700, true},
	} {
		if got := c.r.denies(c.uid, c.gid, c.mode, search); got != c.want {
			t.Errorf("%s: denies = %v, want %v", c.name, got, c.want)
		}
	}
}

// A directory on the way that shuts the account out is as certain as
// the path itself; a path open all the way is never denied.
func TestSurelyDenied(t *testing.T) {
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	if !ModeDecides(root) {
		testutil.Skip(t, testutil.Need{What: "no local file system for temporary directories", Fix: "TMPDIR=/tmp"}, root)
	}
	// Another account than the test's, in none of its groups, above
	// systemd's dynamic range.
	other := reach{uid: os.Getuid() + 70000, allGroups: true}
	dir := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "server.js")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if surelyDenied(other, dir, true) || surelyDenied(other, file, false) {
		t.Fatal("an open path denied")
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if !surelyDenied(other, file, false) || surelyDenied(other, dir, true) {
		t.Error("a file only its owner reads")
	}
	if err := os.Chmod(filepath.Join(root, "a"), 0o700); err != nil {
		t.Fatal(err)
	}
	if !surelyDenied(other, dir, true) {
		t.Error("a directory on the way shut")
	}
	if surelyDenied(reach{uid: -1, unknown: true}, dir, true) {
		t.Error("an unknown account judged")
	}
}
