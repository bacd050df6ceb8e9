package jsruntime

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/testutil"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Version
	}{
		{"1.4.4", Version{1, 4, 4, ""}},
		{"1.4.4\n", Version{1, 4, 4, ""}},
		{"v24.1.0", Version{24, 1, 0, ""}},
		{"v20.20.2", Version{20, 20, 2, ""}},
		{"1.4.0-canary.12+4ab2c3", Version{1, 4, 0, "canary.12"}},
		{"24", Version{24, 0, 0, ""}},
		{"v24.0", Version{24, 0, 0, ""}},
	} {
		got, err := ParseVersion(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "v", "bun", "1.2.3.4", "1.x.0", "1.-2.0", "1..2", "+1.2.3"} {
		if v, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) = %v, want an error", bad, v)
		}
	}
}

func TestVersionCompareAndFloors(t *testing.T) {
	v := func(s string) Version {
		x, err := ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.4.0", "1.4.0", 0},
		{"1.4.4", "1.4.0", 1},
		{"1.3.99", "1.4.0", -1},
		{"2.0.0", "1.4.0", 1},
		{"1.4.0-canary.1", "1.4.0", -1},
		{"1.4.0", "1.4.0-canary.1", 1},
		{"1.4.0-canary.1", "1.4.0-canary.2", -1},
		{"v24.0.0", "24.0.0", 0},
		{"v23.11.1", "24.0.0", -1},
		{"v10.0.0", "v9.0.0", 1},
	} {
		if got := v(tc.a).Compare(v(tc.b)); got != tc.want {
			t.Errorf("%s vs %s = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if f, ok := Floor(config.Bun); !ok || f.String() != "1.4.0" {
		t.Errorf("bun floor %v", f)
	}
	if f, ok := Floor(config.Node); !ok || f.String() != "24.0.0" {
		t.Errorf("node floor %v", f)
	}
}

func TestCheckFindsAndJudges(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir, name, version string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+version+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	write(a, "bun", "1.4.4", 0o644) // not executable: skipped
	want := write(b, "bun", "1.4.4", 0o755)
	if r := Check(ctx, config.Bun, "bun", []string{a, b}, AskVersion); !r.OK() || r.Path != want || r.Version != "1.4.4" {
		t.Fatalf("%+v", r)
	}
	first := write(a, "node", "v20.20.2", 0o755)
	write(b, "node", "v24.1.0", 0o755)
	r := Check(ctx, config.Node, "node", []string{a, b}, AskVersion)
	if r.Path != first || r.Reason != reason.RuntimeBelowFloor || r.Problem != first+" is Node.js v20.20.2, below the floor 24.0.0" {
		t.Fatalf("the first dir must win, and be judged: %+v", r)
	}
	r = Check(ctx, config.Bun, filepath.Join(a, "bun"), nil, AskVersion)
	if r.Reason != reason.RuntimeMissing || r.Problem != filepath.Join(a, "bun")+" is not executable" {
		t.Fatalf("%+v", r)
	}
	if r := Check(ctx, config.Bun, "bun", []string{a}, AskVersion); r.Reason != reason.RuntimeMissing || !strings.Contains(r.Problem, "not found in") {
		t.Fatalf("%+v", r)
	}
	silent := func(context.Context, string) (string, error) { return "", errors.New("no answer within 5s") }
	if r := Check(ctx, config.Bun, want, nil, silent); r.OK() || !r.Retry || r.Reason != "" {
		t.Fatalf("a runtime that does not answer is retried, not refused: %+v", r)
	}
	if got := SearchPath(); len(got) != 4 || got[0] != "/usr/local/sbin" || got[3] != "/usr/bin" {
		t.Fatalf("systemd search path %q", got)
	}
}

// As root, AsUser runs the runtime as that user: a runtime the user can
// replace never runs as root.
func TestAsUser(t *testing.T) {
	testutil.Root(t)
	dir, err := os.MkdirTemp("", "bm2-asuser-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	p := filepath.Join(dir, "bun")
	os.WriteFile(p, []byte("#!/bin/sh\nid -u\n"), 0o755)
	out, err := AsUser(65534, 65534)(context.Background(), p)
	if err != nil || strings.TrimSpace(out) != "65534" {
		t.Fatalf("%q %v", out, err)
	}
}

func TestRuntimeVersionRunsTheBinary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "node")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n[ \"$1\" = --version ] && echo v24.1.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := AskVersion(context.Background(), p)
	if err != nil || out != "v24.1.0\n" {
		t.Fatalf("%q %v", out, err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho oops >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := AskVersion(context.Background(), bad); err == nil || err.Error() != "exit status 3: oops" {
		t.Fatalf("err %v", err)
	}
}

// A runtime the asking user may not execute is missing for that user, not
// a slow moment to retry.
func TestCheckNotExecutableByTheUser(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join(dir, "node")
	if err := os.WriteFile(node, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	denied := func(ctx context.Context, path string) (string, error) {
		return "", &fs.PathError{Op: "fork/exec", Path: path, Err: syscall.EACCES}
	}
	r := Check(context.Background(), config.Node, node, nil, denied)
	if r.OK() || r.Retry || r.Reason != reason.RuntimeMissing || !strings.Contains(r.Problem, node+" cannot be run by the app's user") {
		t.Errorf("check: %+v", r)
	}
}

// What someone other than root can replace: the file, a link's target,
// a directory above either; a root-only path is not (a sticky directory
// protects root's own entries).
func TestReplaceable(t *testing.T) {
	testutil.Root(t)
	dir, err := os.MkdirTemp("/tmp", "bm2-repl-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	mk := func(p string, mode os.FileMode, uid int) string {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		os.Chown(p, uid, 0)
		return p
	}
	root := mk("root/bin/node", 0o755, 0)
	users := mk("user/bin/node", 0o755, 65534)
	world := mk("world/bin/node", 0o757, 0)
	os.Chown(filepath.Join(dir, "userdir"), 0, 0)
	os.MkdirAll(filepath.Join(dir, "userdir", "bin"), 0o755)
	os.Chown(filepath.Join(dir, "userdir", "bin"), 65534, 65534)
	inUserDir := mk("userdir/bin/node", 0o755, 0)
	link := filepath.Join(dir, "root", "bin", "linked")
	os.Symlink(users, link)
	// root's link -> nobody's link -> root's binary: the middle link can
	// be re-pointed by nobody.
	userLink := filepath.Join(dir, "root", "bin", "users-link")
	os.Symlink(root, userLink)
	os.Lchown(userLink, 65534, 65534)
	mid := filepath.Join(dir, "root", "bin", "mid")
	os.Symlink(userLink, mid)
	rootLink := filepath.Join(dir, "root", "bin", "roots-link")
	os.Symlink(root, rootLink)
	for _, c := range []struct {
		path string
		want bool
	}{{root, false}, {users, true}, {world, true}, {inUserDir, true}, {link, true}, {"node", true}, {mid, true}, {rootLink, false}} {
		who, got := Replaceable(c.path)
		if got != c.want {
			t.Errorf("Replaceable(%s) = %v (%s), want %v", c.path, got, who, c.want)
		}
	}
	if who, _ := Replaceable(users); who != "nobody (uid 65534)" && who != "uid 65534" {
		t.Errorf("who = %q", who)
	}
}

// An Asker that would not run the runtime leaves it usable, unchecked.
func TestCheckNotRun(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "node")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	r := Check(context.Background(), config.Node, bin, nil, func(context.Context, string) (string, error) {
		return "", &NotRunError{Why: "writable by alice"}
	})
	if !r.OK() || r.Unchecked != "writable by alice" || r.Path != bin || r.Version != "" {
		t.Errorf("%+v", r)
	}
}
