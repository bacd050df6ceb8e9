package cli

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
		want version
	}{
		{"1.4.4", version{1, 4, 4, ""}},
		{"1.4.4\n", version{1, 4, 4, ""}},
		{"v24.1.0", version{24, 1, 0, ""}},
		{"v20.20.2", version{20, 20, 2, ""}},
		{"1.4.0-canary.12+4ab2c3", version{1, 4, 0, "canary.12"}},
		{"24", version{24, 0, 0, ""}},
		{"v24.0", version{24, 0, 0, ""}},
	} {
		got, err := parseVersion(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseVersion(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "v", "bun", "1.2.3.4", "1.x.0", "1.-2.0", "1..2", "+1.2.3"} {
		if v, err := parseVersion(bad); err == nil {
			t.Errorf("parseVersion(%q) = %v, want an error", bad, v)
		}
	}
}

func TestVersionCompareAndFloors(t *testing.T) {
	v := func(s string) version {
		x, err := parseVersion(s)
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
		if got := v(tc.a).compare(v(tc.b)); got != tc.want {
			t.Errorf("%s vs %s = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if f, ok := floorOf(config.Bun); !ok || f.String() != "1.4.0" {
		t.Errorf("bun floor %v", f)
	}
	if f, ok := floorOf(config.Node); !ok || f.String() != "24.0.0" {
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
	if got, err := findRuntime(p, []string{a, b}); err != nil || got != want {
		t.Fatalf("findRuntime = %q, %v; want %q", got, err, want)
	}
	first := write(a, "node", 0o755)
	write(b, "node", 0o755)
	if got, _ := findRuntime(&config.Project{Runtime: config.Node}, []string{a, b}); got != first {
		t.Fatalf("the first dir must win: %q", got)
	}
	p.RuntimePath = filepath.Join(a, "bun")
	if _, err := findRuntime(p, []string{b}); err == nil || err.Error() != p.RuntimePath+" (runtime_path) is not executable" {
		t.Fatalf("runtime_path not executable: %v", err)
	}
	if got := SystemdSearchPath(); len(got) != 4 || got[0] != "/usr/local/sbin" || got[3] != "/usr/bin" {
		t.Fatalf("systemd search path %q", got)
	}
}

func TestRuntimeVersionRunsTheBinary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "node")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n[ \"$1\" = --version ] && echo v24.1.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := runtimeVersion(context.Background(), p)
	if err != nil || out != "v24.1.0\n" {
		t.Fatalf("%q %v", out, err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho oops >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := runtimeVersion(context.Background(), bad); err == nil || err.Error() != "exit status 3: oops" {
		t.Fatalf("err %v", err)
	}
}
