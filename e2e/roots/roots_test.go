package roots

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFetch makes the roots the end-to-end tests boot (make test-deps
// runs it) and checks that each has the systemd it is there for.
func TestFetch(t *testing.T) {
	root := Require(t, Trixie)
	v, err := SystemdVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	if v < 254 {
		t.Errorf("Debian %s's systemd is %d, want 254 or later (RestartMode=)", Trixie, v)
	}
	t.Logf("%s: systemd %d", root, v)
}

func TestSystemdVersion(t *testing.T) {
	dir := t.TempDir()
	status := filepath.Join(dir, "var/lib/dpkg/status")
	if err := os.MkdirAll(filepath.Dir(status), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		status string
		want   int
		ok     bool
	}{
		{"Package: systemd-sysv\nVersion: 1.0\n\nPackage: systemd\nStatus: install ok installed\nVersion: 257.13-1~deb13u1\n\nPackage: zz\nVersion: 9\n", 257, true},
		{"Package: systemd\nVersion: 252.38-1~deb12u1\n", 252, true},
		{"Package: libsystemd0\nVersion: 257.13-1\n", 0, false},
		{"Package: systemd\nVersion: x257\n", 0, false},
	} {
		if err := os.WriteFile(status, []byte(c.status), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := SystemdVersion(dir)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("SystemdVersion of %q = %d, %v; want %d (ok %v)", c.status, got, err, c.want, c.ok)
		}
	}
}

func TestKeyFollowsPackages(t *testing.T) {
	before := key(Trixie)
	saved := Packages
	t.Cleanup(func() { Packages = saved })
	Packages = append(append([]string(nil), saved...), "strace")
	if after := key(Trixie); after == before {
		t.Errorf("key %q did not change with the package list", after)
	}
}

func TestPathRefusesBadRelease(t *testing.T) {
	for _, r := range []string{"", "../etc", "a b", "trixie.1", "*", "tri[xie", "-v", "Trixie", "1trixie", "tri\nxie"} {
		if _, err := Path(t.Context(), r); err == nil {
			t.Errorf("Path(%q) = nil error", r)
		}
	}
}
