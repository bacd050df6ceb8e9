package ecosystem

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/internal/trust"
)

// A file reached through a link a user made is refused; a file more
// than one user could have written is read, and speaks for no one
// (trust.Nobody): bm2 import then gives its apps the project's own
// account only.
func TestLoadSaysWhoCouldHaveWrittenIt(t *testing.T) {
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
	file := func(path string, uid, gid int, mode os.FileMode) {
		if err := os.WriteFile(path, []byte(`{"apps": [{"name": "x", "script": "x.js", "uid": "root"}]}`), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, uid, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	aliceDir := mk("alice", alice, 0o755)
	bobDir := mk("bob", bob, 0o755)
	shared := mk("shared", alice, 0o777)
	rootDir := mk("srv", 0, 0o755)

	file(filepath.Join(aliceDir, "own.json"), alice, alice, 0o644)
	file(filepath.Join(aliceDir, "bobs.json"), bob, bob, 0o644)
	file(filepath.Join(bobDir, "ecosystem.json"), bob, bob, 0o644)
	file(filepath.Join(shared, "ecosystem.json"), alice, alice, 0o644)
	// The report's case: root's directory, root's file, but its group
	// (not root's private one) may write it.
	file(filepath.Join(rootDir, "ecosystem.config.json"), 0, 4242, 0o664)
	file(filepath.Join(rootDir, "roots.json"), 0, 0, 0o644)
	for path, want := range map[string]struct {
		speaker int
		why     string
	}{
		filepath.Join(aliceDir, "own.json"):             {alice, ""},
		filepath.Join(rootDir, "roots.json"):            {0, ""},
		filepath.Join(aliceDir, "bobs.json"):            {trust.Nobody, "uids 42001, 42002"},
		filepath.Join(shared, "ecosystem.json"):         {trust.Nobody, "writable by every user"},
		filepath.Join(rootDir, "ecosystem.config.json"): {trust.Nobody, "the file is writable by its group, gid 4242"},
	} {
		src, _, err := Load(context.Background(), path, Options{})
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if src.Speaker != want.speaker || !strings.Contains(src.Why, want.why) {
			t.Errorf("%s: speaks for %d (%q), want %d (%q)", path, src.Speaker, src.Why, want.speaker, want.why)
		}
	}

	link := filepath.Join(aliceDir, "link.json")
	if err := os.Symlink(filepath.Join(bobDir, "ecosystem.json"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, alice, alice); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(context.Background(), link, Options{}); err == nil || !strings.Contains(err.Error(), "is a symbolic link that root does not own") {
		t.Errorf("%s: %v, want an error saying it is a link root does not own", link, err)
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

// PM2 reads a .json5 as a .json (lib/Common.js isConfigFile finds ".json"
// in its name): strict JSON is data, anything else an expression that
// is evaluated (checked with pm2 7.0.4, which starts an app from one
// with comments, bare keys and 0x10).
func TestJSON5(t *testing.T) {
	dir := publicTempDir(t)
	strict := filepath.Join(dir, "ecosystem.json5")
	os.WriteFile(strict, []byte(`{"apps": [{"name": "a", "script": "a.js", "port": 3000}]}`), 0o644)
	src, ev, err := Load(context.Background(), strict, Options{Dirs: []string{dir}}) // no node there
	if err != nil || ev != nil || len(src.Apps) != 1 {
		t.Fatalf("strict JSON: %v (evaluated %v, %d apps)", err, ev, len(src.Apps))
	}
	loose := filepath.Join(dir, "loose.json5")
	os.WriteFile(loose, []byte("// comment\n{apps: [{name: 'b', script: 'b.js', max_restarts: 0x10,},],}\n"), 0o644)
	src, ev, err = Load(context.Background(), loose, Options{Dirs: nodeDirs(t)})
	if err != nil || ev == nil || len(src.Apps) != 1 {
		t.Fatalf("JSON5: %v (evaluated %v)", err, ev)
	}
	if v, _ := src.Apps[0].Get("max_restarts"); fmt.Sprint(v) != "16" {
		t.Errorf("max_restarts %v, want 16", v)
	}
}
