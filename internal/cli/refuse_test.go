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

	"github.com/bm2dev/bm2/internal/identity"
)

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
		a.PortHolder = func(p int, uid uint32) (string, bool) {
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
