package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/bm2dev/bm2/e2e/sandbox"
)

// pkg times building the Debian package on the host, this tree's (make
// deb) and the 0.1.0 release's, and installing this tree's in a fresh
// sandbox. Without the build tools (debian/build-deps.sh installs them)
// it says so and measures nothing.
func (r *runner) pkg(ctx context.Context) error {
	for _, tool := range []string{"dpkg-buildpackage", "dh"} {
		if _, err := exec.LookPath(tool); err != nil {
			r.note("package", fmt.Sprintf("**Not measured**: no %s on the host (`sudo sh debian/build-deps.sh` installs what `make deb` needs).", tool))
			r.logf("package: no %s: skipped", tool)
			return nil
		}
	}
	old := filepath.Join(r.repo, "e2e", "testdata", "bm2-0.1.0.tar.xz")
	oldBuild := `set -eo pipefail
tar -xJf "$1" -C "$2"
cd "$2/bm2-0.1.0"
bash debian/build-deb "$3" 2>&1 | tail -1`
	r.record("package",
		"make -s deb   # on the host, in the tree; its last line is the package's path",
		"tar -xJf e2e/testdata/bm2-0.1.0.tar.xz -C SRC && cd SRC/bm2-0.1.0 && bash debian/build-deb OUT   # on the host, outside the tree",
		"DEBIAN_FRONTEND=noninteractive dpkg -i /…/dist/bm2_….deb   # in a fresh sandbox, the dist directory bound read-only",
		"dpkg --purge bm2   # between installs (not timed)")
	var deb string
	for rep := range r.s.PkgReps {
		out, took, err := r.hostTimed(ctx, r.repo, "make", "-s", "deb")
		if err != nil {
			return fmt.Errorf("make deb: %w\n%s", err, tail(out, 4000))
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		deb = lines[len(lines)-1]
		if !strings.HasSuffix(deb, ".deb") {
			return fmt.Errorf("make deb did not end with the package's path:\n%s", tail(out, 4000))
		}
		r.sample("package", "make deb (this tree)", "wall time (ms)", rep, took)
		r.logf("package %d/%d: make deb took %.0f ms", rep+1, r.s.PkgReps, took)

		src, err := os.MkdirTemp("", "bm2-bench-old-src-")
		if err != nil {
			return err
		}
		dst, err := os.MkdirTemp("", "bm2-bench-old-deb-")
		if err != nil {
			os.RemoveAll(src)
			return err
		}
		out, took, err = r.hostTimed(ctx, "", "bash", "-c", oldBuild, "bash", old, src, dst)
		os.RemoveAll(src)
		os.RemoveAll(dst)
		if err != nil {
			return fmt.Errorf("build bm2 0.1.0: %w\n%s", err, tail(out, 4000))
		}
		r.sample("package", "debian/build-deb of the 0.1.0 release", "wall time (ms)", rep, took)
		r.logf("package %d/%d: the 0.1.0 package took %.0f ms", rep+1, r.s.PkgReps, took)
	}
	if deb == "" {
		return nil
	}
	r.logf("package: booting a fresh sandbox for dpkg -i")
	m, err := sandbox.Boot(ctx, sandbox.Options{Binds: []string{filepath.Dir(deb) + ":ro"}, Name: "bench-pkg"})
	if err != nil {
		return err
	}
	r.booted.Add(1)
	defer func() { m.Close(); r.booted.Add(-1) }()
	b := &bed{Machine: m, kind: "pkg"}
	// The host's Docker image may forbid service actions (policy-rc.d),
	// which deb-systemd-invoke honours; a real host has none.
	if out, err := b.sh(ctx, "rm -f /usr/sbin/policy-rc.d"); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	for rep := range r.s.DpkgReps {
		out, err := b.sh(ctx, timedScript(fmt.Sprintf("DEBIAN_FRONTEND=noninteractive dpkg -i %q >/tmp/dpkg.out 2>&1", deb))+"\ncat /tmp/dpkg.out")
		if err != nil {
			return fmt.Errorf("dpkg -i: %w\n%s", err, out)
		}
		took, rc, err := parseTimed(out)
		if err != nil {
			return err
		}
		if rc != 0 {
			return fmt.Errorf("dpkg -i: exit status %d\n%s", rc, out)
		}
		if out, err := b.sh(ctx, "test -x /usr/bin/bm2 && test -x /usr/lib/bm2/bm2-probe"); err != nil {
			return fmt.Errorf("dpkg -i installed no bm2: %w\n%s", err, out)
		}
		r.sample("package", "dpkg -i (fresh sandbox)", "wall time (ms)", rep, took)
		r.logf("package %d/%d: dpkg -i took %.0f ms", rep+1, r.s.DpkgReps, took)
		if out, err := b.sh(ctx, "DEBIAN_FRONTEND=noninteractive dpkg --purge bm2 >/dev/null 2>&1"); err != nil {
			return fmt.Errorf("dpkg --purge bm2: %w\n%s", err, out)
		}
	}
	return nil
}

// hostTimed runs a command on the host (in dir, when not empty) with Go
// on its PATH and returns its output and wall time in ms.
func (r *runner) hostTimed(ctx context.Context, dir, name string, args ...string) (string, float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+os.Getenv("PATH")+":/usr/local/go/bin")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return string(out), float64(time.Since(start).Microseconds()) / 1000, err
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
