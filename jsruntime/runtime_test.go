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

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/journal"
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
	if r.Path != first || r.Reason != journal.ReasonRuntimeBelowFloor || r.Problem != first+" is Node.js v20.20.2, below the floor 24.0.0" {
		t.Fatalf("the first dir must win, and be judged: %+v", r)
	}
	r = Check(ctx, config.Bun, filepath.Join(a, "bun"), nil, AskVersion)
	if r.Reason != journal.ReasonRuntimeMissing || r.Problem != filepath.Join(a, "bun")+" is not executable" {
		t.Fatalf("%+v", r)
	}
	if r := Check(ctx, config.Bun, "bun", []string{a}, AskVersion); r.Reason != journal.ReasonRuntimeMissing || !strings.Contains(r.Problem, "not found in") {
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
	if r.OK() || r.Retry || r.Reason != journal.ReasonRuntimeMissing || !strings.Contains(r.Problem, node+" cannot be run by the app's user") {
		t.Errorf("check: %+v", r)
	}
}
