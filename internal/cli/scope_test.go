package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

func TestTakeScope(t *testing.T) {
	rest, k, err := takeScope([]string{"--user", "list", "--json"})
	if err != nil || k != layout.UserScope || strings.Join(rest, " ") != "list --json" {
		t.Errorf("--user list --json: %v %q %v", rest, k, err)
	}
	rest, k, err = takeScope([]string{"list", "--system"})
	if err != nil || k != layout.SystemScope || strings.Join(rest, " ") != "list" {
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
	l := layout.User(os.Geteuid(), "alice", home)
	te.layout = &l
	te.entries.uid = strconv.Itoa(os.Geteuid())
	te.sysPath = []string{filepath.Join(te.root, "system-etc-bm2")}
	min := 1024
	te.minPort = &min
	return te
}

func TestUserScopeServe(t *testing.T) {
	te := userEnv(t)
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", "name = \"app\"\nscript = \"index.ts\"\ninstances = 2\nport = 8080\n\n[env]\nTOKEN = \"x\"\n"))
	te.mustRun(ExitOK, "serve", dir)
	out := te.stdout.String()
	for _, want := range []string{"which only you can read", "lingering is "} {
		if !strings.Contains(out, want) {
			t.Errorf("serve in user scope does not say %q:\n%s", want, out)
		}
	}
	// Its first line says that the project is the user's own, which
	// root's bm2 list does not show, and how to register it for the
	// system instead.
	first, _, _ := strings.Cut(out, "\n")
	want := "registered " + filepath.Join(te.paths.ConfigDir, "app.toml") + " in user scope (alice's own systemd: root's `bm2 list` does not show it; `sudo bm2 serve` registers it for the system): project \"app\""
	if !strings.HasPrefix(first, want) {
		t.Errorf("serve's first line in user scope:\n%s\nwant it to begin:\n%s", first, want)
	}
	// A manager that started before bm2 was installed gets the units
	// paths.target and timers.target want: the notification spool's path
	// unit and the relay's timer.
	calls := te.sd.Calls()
	for _, want := range []string{"start bm2-notify.path", "start bm2-events.timer"} {
		if !slices.Contains(calls, want) {
			t.Errorf("serve in user scope did not %s: %q", want, calls)
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

func TestUserScopeRefusesASystemProjectsPorts(t *testing.T) {
	te := userEnv(t)
	te.write("system-etc-bm2/sys.toml", "name = \"sys\"\nscript = \"index.ts\"\ncwd = \"/srv/sys\"\nport = 8200\n")
	dir := filepath.Dir(te.write("home/alice/near/bm2.toml", "name = \"near\"\nscript = \"index.ts\"\nport = 8200\n"))
	if code := te.run("serve", dir); code != ExitInvalid {
		t.Fatalf("serve on a system project's port: exit %d\n%s", code, te.stderr.String())
	}
	if !strings.Contains(te.stderr.String(), "overlaps system project sys 8200~8200") {
		t.Errorf("no conflict named:\n%s", te.stderr.String())
	}
	// The fix names the file to edit, which exists: the project's own
	// bm2.toml, not the registered file a refused project never gets.
	src := "~/near/bm2.toml" // the home is written ~
	if _, err := os.Stat(filepath.Join(dir, "bm2.toml")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(te.stderr.String(), "bm2: choose another port in "+src+": the system project sys is root's") {
		t.Errorf("the fix does not name %s:\n%s", src, te.stderr.String())
	}
	if strings.Contains(te.stderr.String(), filepath.Join(te.paths.ConfigDir, "near.toml")) {
		t.Errorf("the refusal names a file that does not exist:\n%s", te.stderr.String())
	}
	// bm2 check finds it as well.
	if code := te.run("check", dir); code != ExitInvalid || !strings.Contains(te.stdout.String(), "overlaps system project sys 8200~8200") ||
		!strings.Contains(te.stderr.String(), "fix: choose another port in "+src) {
		t.Errorf("check of a project on a system project's port: exit %d\n%s%s", code, te.stdout.String(), te.stderr.String())
	}
	// And list points at the system's projects.
	te.stderr.Reset()
	te.mustRun(ExitOK, "list")
	if !strings.Contains(te.stderr.String(), "the system has 1 more: `bm2 --system list`") {
		t.Errorf("list in user scope:\n%s", te.stderr.String())
	}
	// A name that is a system project's says --system.
	te.stderr.Reset()
	te.mustRun(ExitNoProject, "status", "sys")
	if !strings.Contains(te.stderr.String(), "sys is a system project: add --system") {
		t.Errorf("status of a system project in user scope:\n%s", te.stderr.String())
	}
}

// Events in user scope are the user's own: another user's entries, which
// a member of systemd-journal could read, never show.
func TestUserScopeEventsAreTheUsers(t *testing.T) {
	te := userEnv(t)
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", "name = \"app\"\nscript = \"index.ts\"\nport = 8080\n"))
	te.mustRun(ExitOK, "serve", dir)
	own := te.entries.uid
	te.entries.uid = "4242" // bob
	te.entries.event(te.now, journal.ReuseportMissing, "app", "app-0", "reuseport_missing", "bob's forged verdict")
	te.entries.uid = own
	te.stdout.Reset()
	te.mustRun(ExitOK, "events", "app")
	if out := te.stdout.String(); strings.Contains(out, "bob's forged verdict") || !strings.Contains(out, "reuseport_confirmed") {
		t.Errorf("events in user scope:\n%s", out)
	}
	for _, q := range te.entries.queries {
		if q.User != strconv.Itoa(os.Geteuid()) {
			t.Errorf("a journal query of user scope is not the user's: %+v", q)
		}
	}
}

// A user whose manager is not running is told how to get one, not that
// the host lacks systemd.
func TestUserScopeManagerNotRunning(t *testing.T) {
	te := userEnv(t)
	te.noSD = true
	if code := te.run("list", "--json"); code != ExitOK {
		t.Fatalf("list without a manager: exit %d", code)
	}
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", "name = \"app\"\nscript = \"index.ts\"\nport = 8080\n"))
	te.stderr.Reset()
	if code := te.run("serve", dir); code != ExitNoSystemd {
		t.Fatalf("serve without a manager: exit %d\n%s", code, te.stderr.String())
	}
	if err := te.stderr.String(); strings.Contains(err, "PID 1") {
		t.Errorf("a user without a manager is told about PID 1:\n%s", err)
	}
	// serve says what to type to have one, beside its own hint.
	if err := te.stderr.String(); !strings.Contains(err, "`bm2 startup` turns lingering on, which starts it now") ||
		!strings.Contains(err, "bm2: nothing was written") {
		t.Errorf("serve without a manager does not say what to type:\n%s", err)
	}
	te.write("etc/bm2/app.toml", "name = \"app\"\nscript = \"index.ts\"\ncwd = \""+dir+"\"\nport = 8080\n")
	te.stderr.Reset()
	te.run("start", "app")
	if err := te.stderr.String(); !strings.Contains(err, "bm2 startup") || !strings.Contains(err, "su -l alice") {
		t.Errorf("start without a manager:\n%s", err)
	}
}

// In user scope, a running instance without MEM or CPU figures gets the
// reason after the table (the kernel's control groups say it), not a
// bare "-"; in system scope, and once the figures are there, nothing.
func TestUserScopeListSaysWhyNoMemory(t *testing.T) {
	const gap = "MEM and CPU are unknown in user scope on this host: cgroup v1"
	te := userEnv(t)
	te.accounting = gap
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", "name = \"app\"\nscript = \"index.ts\"\nport = 8080\n"))
	te.mustRun(ExitOK, "serve", dir)
	te.stderr.Reset()
	te.mustRun(ExitOK, "list")
	if strings.Contains(te.stderr.String(), gap) {
		t.Errorf("list explains figures it has:\n%s", te.stderr.String())
	}

	u, _ := te.sd.Units(context.Background(), []string{"bm2@app-0.service"})
	u[0].MemoryCurrent, u[0].CPUUsageNSec = view.Unknown, view.Unknown
	te.sd.set(u[0])
	te.stderr.Reset()
	te.mustRun(ExitOK, "list")
	if !strings.Contains(te.stderr.String(), "bm2: warning: "+gap+"\n") {
		t.Errorf("list does not say why MEM and CPU are unknown:\n%s", te.stderr.String())
	}

	sys := newTestEnv(t)
	sys.accounting = gap
	dir = filepath.Dir(sys.write("srv/app/bm2.toml", "name = \"app\"\nscript = \"index.ts\"\nport = 8080\n"))
	sys.mustRun(ExitOK, "serve", dir)
	u, _ = sys.sd.Units(context.Background(), []string{"bm2@app-0.service"})
	u[0].MemoryCurrent, u[0].CPUUsageNSec = view.Unknown, view.Unknown
	sys.sd.set(u[0])
	sys.stderr.Reset()
	sys.mustRun(ExitOK, "list")
	if strings.Contains(sys.stderr.String(), gap) {
		t.Errorf("system scope explains user scope's gap:\n%s", sys.stderr.String())
	}
}
