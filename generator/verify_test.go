package generator

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/units"
)

// TestVerifyGolden runs systemd-analyze verify on every unit each fixture
// generates, together with the shipped static units.
func TestVerifyGolden(t *testing.T) {
	requireAnalyze(t)
	for _, fx := range loadFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			opts := optionsFor(fx.name)
			if host := DetectSystemdVersion(t.Context()); host < opts.SystemdVersion {
				// Output for a newer systemd than this host's (the *-254
				// fixtures on Debian 12's 252): its directives
				// (RestartSteps=) are unknown to this systemd-analyze,
				// which would refuse them. Not verified here, and not a
				// skip (nothing to install makes it run): the golden file
				// pins it, and a host with that systemd verifies it.
				t.Logf("not verified: generated for systemd %d, this host has %d", opts.SystemdVersion, host)
				return
			}
			res := Generate(fx.sources, opts)
			if len(res.Projects) == 0 {
				return // nothing to verify: the fixture is all refusals
			}
			verify := verify
			if opts.Layout.IsUser() {
				verify = verifyUser
			}
			if out, err := verify(t, res); err != nil {
				t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
			}
		})
	}
}

// TestVerifyCatchesBrokenUnits proves the check above can fail.
func TestVerifyCatchesBrokenUnits(t *testing.T) {
	requireAnalyze(t)
	res := Generate([]config.Source{{Path: "/etc/bm2/x.toml", Data: []byte(
		"name=\"x\"\nscript=\"a.js\"\ncwd=\"/srv/x\"\nport=1\n")}}, testOptions)
	for i, f := range res.Files {
		if strings.HasSuffix(f.Path, ".conf") {
			res.Files[i].Data = append(bytes.Clone(f.Data), "RestartSec=soon\nNoSuchKey=1\n"...)
		}
	}
	if out, err := verify(t, res); err == nil {
		t.Fatalf("verify accepted a broken unit:\n%s", out)
	}
}

func lookAnalyze() (string, error) { return exec.LookPath("systemd-analyze") }

func requireAnalyze(t *testing.T) {
	t.Helper()
	if _, err := lookAnalyze(); err != nil {
		testutil.Skip(t, testutil.Need{What: "no systemd-analyze", Fix: "sudo apt-get install systemd"}, err)
	}
}

// The shipped units no generated unit names, for both scopes, load
// without a word from systemd-analyze verify: the scrape endpoint's socket
// and its service, and the path units of
// the notification spool and of the events' relay with their services.
func TestVerifyShippedUnits(t *testing.T) {
	requireAnalyze(t)
	for kind, static := range map[string]fs.FS{"system": units.Static(), "user": units.UserStatic()} {
		if out, err := verifyIn(t, Result{}, kind, static, "bm2-metrics.socket", "bm2-metrics.service",
			"bm2-notify.path", "bm2-notify.service", "bm2-events.timer", "bm2-events.service"); err != nil {
			t.Errorf("%s: systemd-analyze verify: %v\n%s", kind, err, out)
		}
	}
}

// The steering step, shipped for system scope only, loads without a word
// from systemd-analyze verify, as an instance's name instantiates it.
func TestVerifySteerUnit(t *testing.T) {
	requireAnalyze(t)
	if out, err := verifyIn(t, Result{}, "system", units.Static(), "bm2-steer@api-0.service", "bm2-steer@api-surge.service"); err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	if _, err := fs.Stat(units.UserStatic(), "bm2-steer@.service"); err == nil {
		t.Error("bm2-steer@.service is shipped for users' managers, which cannot load BPF programs")
	}
}

// verify lays out a root with the host's system units, bm2's static units,
// the generated files and a stub for
// every runtime executable, then runs systemd-analyze verify --root on every
// generated unit. Any output at all counts as a failure.
func verify(t *testing.T, res Result) (string, error) {
	return verifyIn(t, res, "system", units.Static())
}

// verifyUser is verify for a user's manager (systemd-analyze --user),
// with the units shipped for it (units/user).
func verifyUser(t *testing.T, res Result) (string, error) {
	return verifyIn(t, res, "user", units.UserStatic())
}

// verifyIn verifies the generated units and, besides them, the shipped
// units named in also.
func verifyIn(t *testing.T, res Result, kind string, static fs.FS, also ...string) (string, error) {
	t.Helper()
	root := t.TempDir()
	sys := filepath.Join(root, "usr/lib/systemd", kind)
	// verify does not run generators, so their output goes where it looks.
	gen := filepath.Join(root, "etc/systemd", kind)
	if err := os.CopyFS(sys, os.DirFS("/usr/lib/systemd/"+kind)); err != nil {
		t.Fatal(err)
	}
	// systemd-analyze --user has no --root: the units name the helper in
	// the temporary root instead, and SYSTEMD_UNIT_PATH points at it.
	rewrite := func(b []byte) []byte { return b }
	if kind == "user" {
		rewrite = func(b []byte) []byte {
			b = bytes.ReplaceAll(b, []byte("/usr/lib/bm2/"), []byte(root+"/usr/lib/bm2/"))
			return bytes.ReplaceAll(b, []byte("/usr/bin/bm2 "), []byte(root+"/usr/bin/bm2 "))
		}
		files := make([]File, len(res.Files))
		for i, f := range res.Files {
			f.Data = rewrite(f.Data)
			files[i] = f
		}
		res.Files = files
	}
	err := fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := fs.ReadFile(static, p)
		return os.WriteFile(filepath.Join(sys, p), rewrite(data), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(gen, res.Files); err != nil {
		t.Fatal(err)
	}
	names := append([]string{}, also...)
	for _, helper := range []string{"usr/lib/bm2/bm2-probe", "usr/bin/bm2"} {
		helper = filepath.Join(root, helper)
		if err := os.MkdirAll(filepath.Dir(helper), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(helper, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range res.Projects {
		stub := p.RuntimeCommand()
		if !path.IsAbs(stub) {
			stub = "/usr/local/bin/" + stub
		}
		if err := os.MkdirAll(filepath.Join(root, path.Dir(stub)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, stub), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		names = append(names, units.Slice(p.Name), units.Target(p.Name))
		if p.RestartSchedule != "" {
			names = append(names, units.RestartTimer(p.Name), units.RestartService(p.Name))
		}
		if p.HealthChecked() {
			names = append(names, units.HealthTimer(p.Name), units.HealthService(p.Name))
		}
		for i := 0; i < p.Instances; i++ {
			names = append(names, units.Instance(p.Name, i))
			if p.Mode == config.Cluster {
				names = append(names, units.Probe(p.Name, i))
				if kind == "system" {
					names = append(names, units.Steer(p.Name, i))
				}
			}
		}
	}
	args := append([]string{"verify", "--root=" + root, "--man=no", "--recursive-errors=no"}, names...)
	if kind == "user" {
		args = append([]string{"--user", "verify", "--man=no", "--recursive-errors=no"}, names...)
	}
	cmd := exec.Command("systemd-analyze", args...)
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_COLOR=0")
	if kind == "user" {
		// A user manager's paths start at $XDG_RUNTIME_DIR.
		run := filepath.Join(root, "run/user")
		if err := os.MkdirAll(run, 0o700); err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, "XDG_RUNTIME_DIR="+run, "SYSTEMD_UNIT_PATH="+gen+":"+sys+":")
	}
	out, err := cmd.CombinedOutput()
	if err == nil && len(bytes.TrimSpace(out)) > 0 {
		err = &exec.ExitError{}
	}
	return string(out), err
}
