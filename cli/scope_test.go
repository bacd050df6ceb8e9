package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/scope"
)

func TestTakeScope(t *testing.T) {
	rest, k, err := takeScope([]string{"--user", "list", "--json"})
	if err != nil || k != scope.User || strings.Join(rest, " ") != "list --json" {
		t.Errorf("--user list --json: %v %q %v", rest, k, err)
	}
	rest, k, err = takeScope([]string{"list", "--system"})
	if err != nil || k != scope.System || strings.Join(rest, " ") != "list" {
		t.Errorf("list --system: %v %q %v", rest, k, err)
	}
	// After "--", flags are arguments.
	rest, k, _ = takeScope([]string{"logs", "--", "--user"})
	if k != "" || strings.Join(rest, " ") != "logs -- --user" {
		t.Errorf("after --: %v %q", rest, k)
	}
	if _, _, err := takeScope([]string{"--user", "list", "--system"}); err == nil || ExitCode(err) != ExitUsage {
		t.Errorf("--user with --system: %v", err)
	}
}

// userEnv is a test environment in user scope: the caller's own UID, a
// home of its own.
func userEnv(t *testing.T) *testEnv {
	te := newTestEnv(t)
	home := filepath.Join(te.root, "home", "alice")
	l := scope.UserLayout(os.Geteuid(), "alice", home)
	te.layout = &l
	te.entries.uid = strconv.Itoa(os.Geteuid())
	return te
}

func TestUserScopeServe(t *testing.T) {
	te := userEnv(t)
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", "name = \"app\"\nscript = \"index.ts\"\ninstances = 2\nport = 8080\n\n[env]\nTOKEN = \"x\"\n"))
	te.mustRun(ExitOK, "serve", dir)
	out := te.stdout.String()
	for _, want := range []string{"for user scope (alice)", "which only you can read", "lingering is "} {
		if !strings.Contains(out, want) {
			t.Errorf("serve in user scope does not say %q:\n%s", want, out)
		}
	}
	te.stdout.Reset()
	te.mustRun(ExitOK, "list", "--json")
	var rows []map[string]any
	if err := json.Unmarshal(te.stdout.Bytes(), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("list --json: %v\n%s", err, te.stdout.String())
	}
	for _, r := range rows {
		if r["scope"] != "user" || r["reuseport"] != "confirmed" {
			t.Errorf("row %v: want scope user, reuseport confirmed (the user's own probe events count)", r)
		}
	}
}

func TestUserScopeRefusesLowPorts(t *testing.T) {
	te := userEnv(t)
	dir := filepath.Dir(te.write("home/alice/low/bm2.toml", "name = \"low\"\nscript = \"index.ts\"\nport = 80\n"))
	if code := te.run("serve", dir); code != ExitInvalid {
		t.Fatalf("serve on port 80 in user scope: exit %d\n%s", code, te.stderr.String())
	}
	if !strings.Contains(te.stderr.String(), "below net.ipv4.ip_unprivileged_port_start") {
		t.Errorf("no reason given:\n%s", te.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(te.paths.ConfigDir, "low.toml")); err == nil {
		t.Error("a refused project was registered")
	}
}

// System scope believes only root's events: a user's forged
// reuseport_confirmed does not count there.
func TestSystemScopeIgnoresUserEvents(t *testing.T) {
	te := newTestEnv(t)
	te.entries.uid = "1001"
	dir := filepath.Dir(te.write("srv/app/bm2.toml", "name = \"app\"\nscript = \"index.ts\"\nport = 8080\n"))
	if code := te.run("serve", dir, "--timeout", "2s"); code == ExitOK {
		t.Fatalf("serve took a user's event as the probe's verdict:\n%s", te.stdout.String())
	}
}
