package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/testutil"
)

// needModeBits skips a test that needs dir on a file system whose
// permissions the mode bits decide (explain.ModeDecides): the test's
// temporary directories on a local one.
func needModeBits(t *testing.T, dir string) {
	t.Helper()
	if !explain.ModeDecides(dir) {
		testutil.Skip(t, testutil.Need{What: "no local file system for temporary directories", Fix: "TMPDIR=/tmp"}, dir)
	}
}

// nothingWritten fails the test when serve registered name or had
// systemd do anything.
func (te *testEnv) nothingWritten(name string) {
	te.t.Helper()
	if _, err := os.Stat(filepath.Join(te.paths.ConfigDir, name+".toml")); !errors.Is(err, fs.ErrNotExist) {
		te.t.Errorf("serve registered %s (%v)", name, err)
	}
	if _, err := os.Stat(te.paths.StateDir); !errors.Is(err, fs.ErrNotExist) {
		te.t.Errorf("serve wrote state (%v)", err)
	}
	for _, call := range te.sd.Calls() {
		te.t.Errorf("serve had systemd %s", call)
	}
}

// What bm2 check calls a problem, bm2 serve refuses before anything is
// written: a port of the project that another program holds, with
// check's own words and what to type next. --force serves anyway; the
// project's own running instances holding its ports are no reason to
// refuse.
func TestServeRefusesAHeldPort(t *testing.T) {
	te := newTestEnv(t)
	l := listenExclusive(t)
	port := l.Addr().(*net.TCPAddr).Port
	dir := filepath.Dir(te.write("srv/api/bm2.toml", fmt.Sprintf("name = \"api\"\nscript = \"server.js\"\nruntime = \"node\"\nport = %d\nexec_mode = \"fork\"\n", port)))
	app := func() *App {
		a := te.app()
		a.c.PortHolder = func(p int, uid uint32) (string, bool) {
			return "python3 (pid 812), uid 65534 (nobody)", p == port && uid == uint32(identity.Self().UID)
		}
		return a
	}
	run := func(args ...string) int {
		te.stdout.Reset()
		te.stderr.Reset()
		return app().Main(context.Background(), args)
	}

	msg := fmt.Sprintf("port_in_use: port %d is held by python3 (pid 812), uid 65534 (nobody), not by api: its instances cannot listen there", port)
	if code := run("check", dir); code != ExitInvalid || !strings.Contains(te.stderr.String(), msg) {
		t.Fatalf("check: exit %d\n%s%s", code, te.stdout.String(), te.stderr.String())
	}
	if code := run("serve", dir); code != ExitInvalid {
		t.Fatalf("serve: exit %d\n%s%s", code, te.stdout.String(), te.stderr.String())
	}
	want := "bm2: " + msg + " (SO_REUSEPORT joins only sockets of the same user)\n" +
		"bm2: fix: stop that program, or give api another `port =` in bm2.toml; then `bm2 serve` (see bm2.toml(5) ERRORED PROJECTS); `bm2 serve --force` serves it anyway\n"
	if got := te.stderr.String(); got != want {
		t.Errorf("serve's refusal:\n%s\nwant:\n%s", got, want)
	}
	if te.stdout.Len() != 0 {
		t.Errorf("serve said:\n%s", te.stdout.String())
	}
	te.nothingWritten("api")

	// --force goes ahead, and says what it went past.
	if code := run("serve", "--force", dir); code != ExitOK {
		t.Fatalf("serve --force: exit %d\n%s%s", code, te.stdout.String(), te.stderr.String())
	}
	if got := te.stderr.String(); !strings.Contains(got, "bm2: warning: "+msg) || !strings.Contains(got, "(--force: serving anyway)") {
		t.Errorf("serve --force does not warn:\n%s", got)
	}
	if !slices.Contains(te.sd.Calls(), "start bm2-api.target") {
		t.Error("serve --force did not start the project")
	}

	// Now api-0 runs (the fake does not listen: the listener stands for
	// it). A port its own running instance holds is not another
	// program's: serving again is no refusal, nor is check a problem.
	te.write("srv/api/bm2.toml", fmt.Sprintf("name = \"api\"\nscript = \"server.js\"\nruntime = \"node\"\nport = %d\nexec_mode = \"fork\"\nstop_timeout_ms = 2000\n", port))
	if code := run("serve", dir); code != ExitOK {
		t.Fatalf("serve of the running project: exit %d\n%s%s", code, te.stdout.String(), te.stderr.String())
	}
	if code := run("check", dir); code != ExitOK {
		t.Fatalf("check of the running project: exit %d\n%s%s", code, te.stdout.String(), te.stderr.String())
	}
}

// A working directory the project's account certainly cannot enter is
// refused by serve before anything is written, as check finds it; one
// bm2 cannot be certain of is a warning for both, and serve goes ahead.
func TestServeRefusesACwdCertainlyClosed(t *testing.T) {
	for _, c := range []struct {
		name string
		user string // "": the project's own account, not allocated yet
		mode os.FileMode
		sure bool
		why  string // the warning's reason, when not sure
	}{
		// No class of the mode may search it, and systemd allocates an
		// account that owns nothing and is in none of its groups.
		{name: "own account, 0700", mode: 0o700, sure: true},
		{name: "own account, 0750", mode: 0o750, sure: true},
		// "other" may search: whatever denied it (a sandbox, an ACL
		// bm2 did not read) is not the mode's doing.
		{name: "own account, 0701", mode: 0o701, why: "systemd allocates the account when the project starts"},
		// bob's groups are known (bob): the directory's group is not
		// one of them.
		{name: "static user, 0750", user: "bob", mode: 0o750, sure: true},
		// An account the user database gives no groups for may be in
		// the directory's group.
		{name: "static user of unknown groups, 0750", user: "carol", mode: 0o750, why: "the account's groups or an ACL may let it in"},
		{name: "static user of unknown groups, 0700", user: "carol", mode: 0o700, sure: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := newTestEnv(t)
			body := strings.ReplaceAll(nodeAPI, "api", "web")
			if c.user != "" {
				body += fmt.Sprintf("user = %q\n", c.user)
			}
			dir := filepath.Dir(te.write("srv/web/bm2.toml", body))
			// The test's directories above it are open to every account
			// (t.TempDir makes them 0700), as a host's are.
			for _, d := range []string{filepath.Dir(te.root), te.root} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, c.mode); err != nil {
				t.Fatal(err)
			}
			needModeBits(t, dir)
			te.access[dir] = &fs.PathError{Op: "stat", Path: dir, Err: fs.ErrPermission}
			app := func() *App {
				a := te.app()
				a.c.LookupUser = func(ctx context.Context, name, group string) (identity.Identity, error) {
					switch name {
					case "bob":
						return identity.Identity{Name: "bob", UID: 1001, GID: 1001}, nil
					case "carol": // not in the test's user database
						return identity.Identity{Name: "carol", UID: 1002, GID: 1002}, nil
					}
					return identity.Identity{}, errors.New("unknown user " + name)
				}
				return a
			}
			run := func(args ...string) int {
				te.stdout.Reset()
				te.stderr.Reset()
				return app().Main(context.Background(), args)
			}
			msg := "cwd_missing: web-0 cannot start: working directory " + dir + ": permission denied (as user "

			code := run("check", dir)
			switch out := te.stdout.String() + te.stderr.String(); {
			case c.sure && (code != ExitInvalid || !strings.Contains(te.stderr.String(), "problem in") || !strings.Contains(out, "\n"+msg)):
				t.Fatalf("check: exit %d\n%s", code, out)
			case !c.sure && (code != ExitOK || !strings.Contains(out, "warning: "+msg) || !strings.Contains(out, "bm2 cannot be certain: "+c.why)):
				t.Fatalf("check: exit %d\n%s", code, out)
			}

			code = run("serve", dir)
			if !c.sure {
				if code != ExitOK || !strings.Contains(te.stderr.String(), "bm2: warning: "+msg) || !strings.Contains(te.stderr.String(), "bm2 cannot be certain: "+c.why) {
					t.Fatalf("serve: exit %d\n%s%s", code, te.stdout.String(), te.stderr.String())
				}
				return
			}
			if code != ExitInvalid || !strings.HasPrefix(te.stderr.String(), "bm2: "+msg) ||
				!strings.HasSuffix(te.stderr.String(), "bm2: fix: create it and let the app's user enter it, or fix `cwd =` in bm2.toml; then `bm2 serve` (see bm2.toml(5) KEYS); `bm2 serve --force` serves it anyway\n") {
				t.Fatalf("serve: exit %d\n%s%s", code, te.stdout.String(), te.stderr.String())
			}
			te.nothingWritten("web")

			if code := run("serve", "--force", dir); code != ExitOK || !strings.Contains(te.stderr.String(), "bm2: warning: "+msg) ||
				!strings.Contains(te.stderr.String(), "(--force: serving anyway)") {
				t.Fatalf("serve --force: exit %d\n%s%s", code, te.stdout.String(), te.stderr.String())
			}
		})
	}
}
