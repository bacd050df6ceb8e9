package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// served returns an env with the seed's project registered and running.
func served(t *testing.T) *testEnv {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.mustRun(ExitOK, "serve", dir)
	te.sd.Calls()
	return te
}

func TestStopStartRestart(t *testing.T) {
	te := served(t)
	te.mustRun(ExitOK, "stop", "api")
	if got := te.sd.Calls(); got[0] != "stop bm2-api.target" {
		t.Fatalf("calls %q", got)
	}
	if te.stdout.String() != "api stopped (4 instances)\n" {
		t.Fatalf("stdout %q", te.stdout.String())
	}
	st, _ := te.sd.Units(context.Background(), []string{"bm2@api-0.service", "bm2@api-3.service"})
	if st[0].ActiveState != "inactive" || st[1].ActiveState != "inactive" {
		t.Fatalf("still running: %+v", st)
	}

	(state.Dir{Path: te.paths.StateDir}).SetErrored("api", "reuseport_missing")
	te.mustRun(ExitFailure, "restart", "api") // errored: restart does not clear it
	if !strings.Contains(te.stderr.String(), "project api is errored (reuseport_missing)") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	te.sd.Calls()

	te.mustRun(ExitOK, "start", "api")
	want := []string{
		"reset-failed bm2@api-0.service", "reset-failed bm2@api-1.service",
		"reset-failed bm2@api-2.service", "reset-failed bm2@api-3.service",
		"start bm2-api.target",
	}
	if got := te.sd.Calls(); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q\nwant %q", got, want)
	}
	if out := te.stdout.String(); !strings.HasPrefix(out, "cleared errored state of api (was: reuseport_missing)\nstarting bm2-api.target\napi-0 online (pid ") ||
		!strings.HasSuffix(out, "api online and confirmed\n") {
		t.Fatalf("stdout:\n%s", out)
	}

	te.mustRun(ExitOK, "restart", "api-2")
	if got := te.sd.Calls(); !reflect.DeepEqual(got, []string{"reset-failed bm2@api-2.service", "restart bm2@api-2.service"}) {
		t.Fatalf("calls %q", got)
	}
	if out := te.stdout.String(); !strings.HasPrefix(out, "restarting bm2@api-2.service\napi-2 online (pid ") || !strings.HasSuffix(out, "api-2 online and confirmed\n") {
		t.Fatalf("stdout:\n%s", out)
	}

	te.mustRun(ExitOK, "stop", "api-1")
	if got := te.sd.Calls(); !reflect.DeepEqual(got, []string{"stop bm2@api-1.service"}) {
		t.Fatalf("calls %q", got)
	}
	te.mustRun(ExitOK, "start", "api-1")

	te.mustRun(ExitNoProject, "start", "nope")
	te.mustRun(ExitNoProject, "stop", "api-9")
	if !strings.Contains(te.stderr.String(), "no such instance: api-9 (project api has 4)") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	te.noSD = true
	te.mustRun(ExitNoSystemd, "stop", "api")
}

func TestStartFailure(t *testing.T) {
	te := served(t)
	te.mustRun(ExitOK, "stop", "api")
	te.sd.fail["bm2@api-0.service"] = UnitStatus{ActiveState: "failed", SubState: "failed", Result: "signal", ExecMainCode: 2, ExecMainStatus: 11}
	te.mustRun(ExitFailure, "start", "api")
	if !strings.HasPrefix(te.stderr.String(), "bm2: instance api-0 errored: signal, signal SIGSEGV\nbm2: (bm2@api-0.service has logged nothing)\nbm2: fix the app and run `bm2 start api` again") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

func TestInvalidProjectCannotStart(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/bad.toml", "name = \"bad\"\nport = 1\n")
	te.mustRun(ExitInvalid, "start", "bad")
	if !strings.Contains(te.stderr.String(), "project bad is invalid, so systemd has no units for it") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	te.mustRun(ExitInvalid, "status", "bad")
}

func TestStatus(t *testing.T) {
	te := served(t)
	te.mustRun(ExitOK, "status", "api")
	out := te.stdout.String()
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	for _, want := range []string{
		"api: " + reg + "\n",
		"  4 x cluster on port 3000, runtime bun (" + filepath.Join(te.bin, "bun") + "), user bm2-api (its own account)\n",
		"  ID  UNIT               STATE   REASON  PID   PORT  REUSEPORT  RESTARTS  UPTIME  MEM    CPU\n",
		"  0   bm2@api-0.service  online  -       1001  3000  confirmed  0         10s     40.0M  1.0s\n",
		"more: systemctl status bm2-api.target 'bm2@api-*'\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("status lacks %q:\n%s", want, out)
		}
	}
	te.mustRun(ExitNoProject, "status", "nope")
	if strings.Contains(out, "reusePort supplied") {
		t.Errorf("an app that sets reusePort itself:\n%s", out)
	}
}

// status says when bm2 supplies reusePort (reuseport = "preload").
func TestStatusPreload(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/shop/bm2.toml", "name = \"shop\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3100\nreuseport = \"preload\"\n"))
	te.mustRun(ExitOK, "serve", dir)
	te.mustRun(ExitOK, "status", "shop")
	if out := te.stdout.String(); !strings.Contains(out, "\n  reusePort supplied by bm2 (preload)\n") {
		t.Fatalf("status:\n%s", out)
	}
}

// status shows the units a project needs with their states in systemd,
// in the order the file lists them; without systemd they are unknown.
func TestStatusNeeds(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/db/bm2.toml", `name = "db"
script = "server.js"
port = 3100
wants = ["postgresql.service", "network-online.target"]
requires = ["redis-server.service", "nosuch.service"]
`))
	te.mustRun(ExitOK, "serve", dir)
	te.sd.set(UnitStatus{Name: "postgresql.service", ActiveState: "active", SubState: "running"})
	te.sd.set(UnitStatus{Name: "network-online.target", ActiveState: "active", SubState: "active"})
	te.sd.set(UnitStatus{Name: "redis-server.service", ActiveState: "inactive", SubState: "dead"})
	te.mustRun(ExitOK, "status", "db")
	want := "  needs: postgresql.service (wants) active, network-online.target (wants) active, " +
		"redis-server.service (requires) inactive, nosuch.service (requires) not-found\n"
	if out := te.stdout.String(); !strings.Contains(out, want) {
		t.Fatalf("status lacks %q:\n%s", want, out)
	}
	te.sd.set(UnitStatus{Name: "redis-server.service", ActiveState: "failed", SubState: "failed"})
	te.mustRun(ExitOK, "status", "db")
	if out := te.stdout.String(); !strings.Contains(out, "redis-server.service (requires) failed, ") {
		t.Fatalf("status:\n%s", out)
	}
	te.noSD = true
	te.mustRun(ExitOK, "status", "db")
	want = "  needs: postgresql.service (wants) unknown, network-online.target (wants) unknown, " +
		"redis-server.service (requires) unknown, nosuch.service (requires) unknown\n"
	if out := te.stdout.String(); !strings.Contains(out, want) {
		t.Fatalf("status without systemd lacks %q:\n%s", want, out)
	}

	// A project that needs nothing has no such line.
	te = served(t)
	te.mustRun(ExitOK, "status", "api")
	if out := te.stdout.String(); strings.Contains(out, "needs:") {
		t.Fatalf("status:\n%s", out)
	}
}

func TestDelete(t *testing.T) {
	te := served(t)
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	st := state.Dir{Path: te.paths.StateDir}
	st.SetErrored("api", "reuseport_missing")
	te.sd.mu.Lock()
	te.sd.units["bm2@api-1.service"].ActiveState = "failed"
	te.sd.mu.Unlock()
	te.sd.set(UnitStatus{Name: "bm2-probe@api-0.service", ActiveState: "activating", SubState: "start"})
	te.sd.set(UnitStatus{Name: "bm2-probe@api-x-0.service", ActiveState: "activating", SubState: "start"}) // another project's

	priv := filepath.Join(te.paths.ConfigDir, "private", "api.toml")
	if _, err := os.Stat(priv); err != nil {
		t.Fatalf("serve kept no private part: %v", err)
	}
	te.mustRun(ExitOK, "delete", "api")
	for _, f := range []string{reg, priv} {
		if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s still there: %v", f, err)
		}
	}
	if _, errored, _ := st.Errored("api"); errored {
		t.Fatal("errored mark left")
	}
	calls := te.sd.Calls()
	if calls[0] != "stop bm2-probe@api-0.service" || calls[1] != "stop bm2-api.target" || !contains(calls, "stop bm2-api.slice") ||
		!contains(calls, "reload") || !contains(calls, "reset-failed bm2@api-1.service") || contains(calls, "stop bm2-probe@api-x-0.service") {
		t.Fatalf("calls %q", calls)
	}
	// No unit of the project is left behind.
	left, _ := te.sd.Loaded(context.Background(), []string{"*api*"})
	if len(left) != 1 || left[0].Name != "bm2-probe@api-x-0.service" {
		t.Fatalf("left behind: %+v", left)
	}
	if te.stdout.String() != "deleted api: stopped 4 instances, removed "+reg+"\n" {
		t.Fatalf("stdout %q", te.stdout.String())
	}
	te.mustRun(ExitNoProject, "delete", "api")
}

func TestDeleteRefusesFilesItDidNotWrite(t *testing.T) {
	te := newTestEnv(t)
	shipped := te.write("usr/lib/bm2/pkg.toml", "name = \"pkg\"\nscript = \"a.js\"\ncwd = \"/srv/pkg\"\nport = 7000\n")
	te.mustRun(ExitFailure, "delete", "pkg")
	if !strings.Contains(te.stderr.String(), "project pkg is defined by "+shipped) {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if _, err := os.Stat(shipped); err != nil {
		t.Fatal(err)
	}
	if len(te.sd.Calls()) != 0 {
		t.Fatal("systemd was touched")
	}

	// An empty /etc file masks the shipped one: delete leaves masks alone.
	te.write("etc/bm2/pkg.toml", "")
	te.mustRun(ExitFailure, "delete", "pkg")
	if !strings.Contains(te.stderr.String(), "masks project pkg") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A probe still ending after its instance failed would swallow the next
// start of its unit (a oneshot being started is not started again): bm2
// start stops it first, so that the new run gets a probe of its own.
func TestStartStopsAnEndingProbe(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", "name = \"api\"\nscript = \"index.ts\"\ninstances = 2\nport = 3000\n"))
	te.mustRun(ExitOK, "serve", dir)
	te.sd.mu.Lock()
	te.sd.units["bm2@api-0.service"].ActiveState = "failed"
	te.sd.units["bm2-probe@api-0.service"] = &UnitStatus{Name: "bm2-probe@api-0.service", LoadState: "loaded", ActiveState: "activating", SubState: "start"}
	te.sd.units["bm2-probe@api-1.service"] = &UnitStatus{Name: "bm2-probe@api-1.service", LoadState: "loaded", ActiveState: "activating", SubState: "start"}
	te.sd.calls = nil
	te.sd.mu.Unlock()
	te.mustRun(ExitOK, "start", "api")
	calls := strings.Join(te.sd.calls, "\n")
	stop, start := strings.Index(calls, "stop bm2-probe@api-0.service"), strings.Index(calls, "start bm2-api.target")
	if stop < 0 || start < 0 || stop > start {
		t.Errorf("the ending probe of api-0 was not stopped before the start:\n%s", calls)
	}
	if strings.Contains(calls, "stop bm2-probe@api-1.service") {
		t.Errorf("the probe of running api-1 was stopped:\n%s", calls)
	}
}

// One instance marked errored by the exit hook (another user's process
// holds its port) is errored alone: list and status say so and name the
// holder, the project is not errored, its neighbours restart, and
// `bm2 start` of that instance clears the mark.
func TestInstanceMark(t *testing.T) {
	te := served(t)
	te.mustRun(ExitOK, "stop", "api-1")
	st := state.Dir{Path: te.paths.StateDir}
	if _, err := st.SetInstanceErrored("api-1", state.Mark{Reason: "port_in_use", Detail: "python3 (pid 812), uid 65534 (nobody)"}); err != nil {
		t.Fatal(err)
	}
	// systemd does not start it (its ConditionPathExists=).
	te.sd.Start(context.Background(), "bm2@api-1.service")
	if u, _ := te.sd.Units(context.Background(), []string{"bm2@api-1.service"}); u[0].ActiveState != "inactive" {
		t.Fatalf("marked instance started: %+v", u[0])
	}

	te.mustRun(ExitOK, "list", "--json")
	var rows []view.Row
	if err := json.Unmarshal(te.stdout.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		want := view.StateOnline
		if r.Unit == "bm2@api-1.service" {
			want = view.StateErrored
		}
		if r.State != want || (want == view.StateErrored && (r.Reason != "port_in_use" || r.Holder != "python3 (pid 812), uid 65534 (nobody)")) {
			t.Errorf("%s: %s %q %q, want %s", r.Unit, r.State, r.Reason, r.Holder, want)
		}
	}
	te.mustRun(ExitOK, "list")
	if out := te.stdout.String(); !strings.Contains(out, "errored  port_in_use: python3 (pid 812), uid 655…") {
		t.Errorf("list:\n%s", out)
	}
	te.mustRun(ExitOK, "status", "api")
	out := te.stdout.String()
	if strings.Contains(out, "  errored: ") ||
		!strings.Contains(out, "  api-1: port_in_use: port 3000 is held by python3 (pid 812), uid 65534 (nobody), not by api") ||
		!strings.Contains(out, "`bm2 start api-1`") {
		t.Errorf("status:\n%s", out)
	}

	// The neighbour restarts.
	te.sd.Calls()
	te.mustRun(ExitOK, "restart", "api-2")
	if _, ok, _ := st.InstanceErrored("api-1"); !ok {
		t.Error("restart of a neighbour cleared api-1's mark")
	}
	te.mustRun(ExitOK, "start", "api-1")
	if out := te.stdout.String(); !strings.HasPrefix(out, "cleared errored state of api-1 (was: port_in_use)\n") || !strings.HasSuffix(out, "api-1 online and confirmed\n") {
		t.Errorf("start api-1:\n%s", out)
	}
	if _, ok, _ := st.InstanceErrored("api-1"); ok {
		t.Error("start kept the mark")
	}

	// restart and serve clear it too.
	st.SetInstanceErrored("api-3", state.Mark{Reason: "port_in_use"})
	te.mustRun(ExitOK, "restart", "api-3")
	if _, ok, _ := st.InstanceErrored("api-3"); ok {
		t.Error("restart kept the mark")
	}
	st.SetInstanceErrored("api-0", state.Mark{Reason: "port_in_use"})
	te.mustRun(ExitOK, "serve", filepath.Join(te.root, "srv/api"))
	if _, ok, _ := st.InstanceErrored("api-0"); ok || !strings.Contains(te.stdout.String(), "cleared errored state of api-0") {
		t.Errorf("serve kept the mark:\n%s", te.stdout.String())
	}
}

// bm2 delete removes the probe's verdict files on the project's instances
// (the surge's too), and no other project's.
func TestDeleteForgetsVerdicts(t *testing.T) {
	testutil.Root(t) // the verdicts' directory is root's in system scope
	te := newTestEnv(t)
	te.paths.RunStateDir = filepath.Join(te.root, "run", "bm2")
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.mustRun(ExitOK, "serve", dir)
	v := relay.Verdicts{Spool: relay.Spool{Dir: filepath.Join(te.paths.RunStateDir, layout.VerdictSubdir)}}
	if err := os.MkdirAll(v.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"api-0", "api-surge", "api-x-0"} {
		project, _, _ := units.ParseInstance(id)
		if err := v.Put(journal.Event{Kind: journal.ReuseportConfirmed, Project: project, Instance: id, Invocation: "r", Message: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	te.mustRun(ExitOK, "delete", "api")
	for id, want := range map[string]bool{"api-0": false, "api-surge": false, "api-x-0": true} {
		if _, err := os.Lstat(filepath.Join(v.Dir, id)); (err == nil) != want {
			t.Errorf("%s's verdict file: %v; want it there: %v", id, err, want)
		}
	}
}
