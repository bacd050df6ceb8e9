package pm2load

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/testutil"
)

// What bm2 import reads must be its owner's to change, and must not be
// reached through a link a user made: run as root, these are refused.
func TestLoadRefusesFilesOthersCanSwap(t *testing.T) {
	testutil.Root(t)
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	const alice, bob = 42001, 42002
	mk := func(dir string, uid int, mode os.FileMode) string {
		d := filepath.Join(base, dir)
		if err := os.Mkdir(d, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	file := func(path string, uid int) {
		if err := os.WriteFile(path, []byte(`{"apps": [{"name": "x", "script": "x.js"}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	aliceDir := mk("alice", alice, 0o755)
	bobDir := mk("bob", bob, 0o755)
	shared := mk("shared", alice, 0o777)

	file(filepath.Join(aliceDir, "own.json"), alice)
	if _, _, err := Load(context.Background(), filepath.Join(aliceDir, "own.json"), Options{}); err != nil {
		t.Errorf("alice's own file in her directory: %v", err)
	}
	file(filepath.Join(aliceDir, "bobs.json"), bob)
	file(filepath.Join(bobDir, "ecosystem.json"), bob)
	file(filepath.Join(shared, "ecosystem.json"), alice)
	link := filepath.Join(aliceDir, "link.json")
	if err := os.Symlink(filepath.Join(bobDir, "ecosystem.json"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, alice, alice); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(aliceDir, "bobs.json"):    "belongs to uid 42002 but",
		link:                                    "is a symbolic link that root does not own",
		filepath.Join(shared, "ecosystem.json"): "may be written by other users",
	} {
		if _, _, err := Load(context.Background(), path, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", path, err, want)
		}
	}
}

// The owner of what was read comes with the source, from the file
// descriptor the data came from: bm2 import never looks the file up again
// to tell whose it is.
func TestLoadSaysWhoseFileItRead(t *testing.T) {
	testutil.Root(t)
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "app")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "ecosystem.config.json")
	if err := os.WriteFile(f, []byte(`{"apps": [{"name": "x", "script": "x.js", "gid": "shadow"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, uid := range []int{0, 42001} {
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(f, uid, uid); err != nil {
			t.Fatal(err)
		}
		src, _, err := Load(context.Background(), f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !src.OwnerKnown || src.Owner != uid {
			t.Errorf("owner %d (known %v), want %d", src.Owner, src.OwnerKnown, uid)
		}
	}
}
