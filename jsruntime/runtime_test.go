package jsruntime

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bm2dev/bm2/config"
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

func TestFindRuntime(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir, name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho 1.4.4\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(a, "bun", 0o644) // not executable: skipped
	want := write(b, "bun", 0o755)
	p := &config.Project{Runtime: config.Bun}
	if got, err := Find(p, []string{a, b}); err != nil || got != want {
		t.Fatalf("findRuntime = %q, %v; want %q", got, err, want)
	}
	first := write(a, "node", 0o755)
	write(b, "node", 0o755)
	if got, _ := Find(&config.Project{Runtime: config.Node}, []string{a, b}); got != first {
		t.Fatalf("the first dir must win: %q", got)
	}
	p.RuntimePath = filepath.Join(a, "bun")
	if _, err := Find(p, []string{b}); err == nil || err.Error() != p.RuntimePath+" (runtime_path) is not executable" {
		t.Fatalf("runtime_path not executable: %v", err)
	}
	if got := SearchPath(); len(got) != 4 || got[0] != "/usr/local/sbin" || got[3] != "/usr/bin" {
		t.Fatalf("systemd search path %q", got)
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
