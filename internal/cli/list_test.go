package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

// listEnv registers projects and gives their units every state there is.
func listEnv(t *testing.T) *testEnv {
	te := newTestEnv(t)
	te.write("etc/bm2/api.toml", "name = \"api\"\nscript = \"a.ts\"\ncwd = \"/srv/api\"\ninstances = 4\nport = 3000\n")
	te.write("etc/bm2/web.toml", "name = \"web\"\nscript = \"s.js\"\ncwd = \"/srv/web\"\ninstances = 3\nport = 4000\nexec_mode = \"fork\"\n")
	te.write("etc/bm2/zeta.toml", "name = \"zeta\"\nscript = \"z.js\"\ncwd = \"/srv/zeta\"\nport = 5000\n")
	te.write("etc/bm2/bad.toml", "name = \"bad\"\nport = 0\n")
	now := te.now
	running := func(name string, pid uint32, up time.Duration, mem, cpu uint64, restarts uint32) UnitStatus {
		return UnitStatus{Name: name, ActiveState: "active", SubState: "running", Result: "success", MainPID: pid,
			ActiveEnter: now.Add(-up), MemoryCurrent: mem, CPUUsageNSec: cpu, NRestarts: restarts}
	}
	te.sd.set(running("bm2@api-0.service", 1234, 3*time.Minute+12*time.Second, 43201331, 1_300_000_000, 0))
	te.sd.set(UnitStatus{Name: "bm2@api-1.service", ActiveState: "activating", SubState: "start", MainPID: 1240, MemoryCurrent: 1 << 20, CPUUsageNSec: 10_000_000})
	te.sd.set(UnitStatus{Name: "bm2@api-2.service", ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", NRestarts: 3, MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	te.sd.set(UnitStatus{Name: "bm2@api-3.service", ActiveState: "failed", SubState: "failed", Result: "start-limit-hit", NRestarts: 16, MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	te.sd.set(UnitStatus{Name: "bm2@web-0.service", ActiveState: "inactive", SubState: "dead", Result: "success", MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	te.sd.set(UnitStatus{Name: "bm2@web-1.service", ActiveState: "failed", SubState: "failed", Result: "signal", NRestarts: 1, MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	te.sd.set(running("bm2@web-2.service", 77, 26*time.Hour+5*time.Minute, 2<<30, 90*1e9, 2))
	te.sd.set(UnitStatus{Name: "bm2@zeta-0.service", ActiveState: "inactive", SubState: "dead", Result: "success", MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	if _, err := (state.Dir{Path: te.paths.StateDir}).SetErrored("zeta", "reuseport_missing"); err != nil {
		t.Fatal(err)
	}
	// api-0's current run is confirmed; an older run of api-1 was.
	te.entries.event(now.Add(-3*time.Minute), journal.ReuseportConfirmed, "api", "api-0", "", "api-0: confirmed")
	te.entries.event(now.Add(-time.Hour), journal.ReuseportConfirmed, "api", "api-1", "", "api-1: confirmed")
	return te
}

func TestListTable(t *testing.T) {
	te := listEnv(t)
	te.mustRun(ExitOK, "list")
	want := `PROJECT  ID  MODE     STATE            REASON                                    PID   PORT  REUSEPORT  HEALTH  RESTARTS  UPTIME  MEM    CPU
api      0   cluster  online           -                                         1234  3000  confirmed  -       0         3m12s   41.2M  1.3s
api      1   cluster  launching        -                                         1240  3000  -          -       0         -       1.0M   0.0s
api      2   cluster  waiting restart  exit-code                                 -     3000  -          -       3         -       -      -
api      3   cluster  errored          restart_budget_exhausted                  -     3000  -          -       16        -       -      -
bad      -   -        invalid          script: required (the entry file, relat…  -     -     -          -       -         -       -      -
web      0   fork     stopped          -                                         -     4000  -          -       0         -       -      -
web      1   fork     errored          signal                                    -     4001  -          -       1         -       -      -
web      2   fork     online           -                                         77    4002  -          -       2         1d2h    2.0G   1m30s
zeta     0   cluster  errored          reuseport_missing                         -     5000  missing    -       0         -       -      -
`
	if got := te.stdout.String(); got != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(te.stderr.String(), "bm2: warning: project bad is invalid: run `bm2 check "+te.paths.ConfigDir+"/bad.toml` for details\n") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}

	te.mustRun(ExitOK, "ls", "web")
	if lines := strings.Split(strings.TrimSpace(te.stdout.String()), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[1], "web ") {
		t.Fatalf("ls web:\n%s", te.stdout.String())
	}
	te.mustRun(ExitNoProject, "list", "nope")
}

func TestListJSON(t *testing.T) {
	te := listEnv(t)
	te.mustRun(ExitOK, "list", "--json")
	var rows []map[string]any
	if err := json.Unmarshal(te.stdout.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, te.stdout.String())
	}
	if len(rows) != 9 {
		t.Fatalf("%d rows", len(rows))
	}
	keys := []string{"project", "id", "unit", "mode", "state", "reason", "pid", "port", "reuseport", "health", "restarts", "uptime_ms", "memory_bytes", "cpu_ms", "scope"}
	for _, r := range rows {
		if len(r) != len(keys) {
			t.Fatalf("keys of %v", r)
		}
		for _, k := range keys {
			if _, ok := r[k]; !ok {
				t.Fatalf("no %q in %v", k, r)
			}
		}
	}
	api0 := rows[0]
	if api0["project"] != "api" || api0["id"] != 0.0 || api0["unit"] != "bm2@api-0.service" || api0["state"] != "online" ||
		api0["pid"] != 1234.0 || api0["port"] != 3000.0 || api0["uptime_ms"] != 192000.0 ||
		api0["memory_bytes"] != 43201331.0 || api0["cpu_ms"] != 1300.0 || api0["reuseport"] != "confirmed" {
		t.Fatalf("api-0: %v", api0)
	}
	if r := rows[3]; r["state"] != "errored" || r["reason"] != string(reason.Budget) || r["memory_bytes"] != nil || r["cpu_ms"] != nil {
		t.Fatalf("api-3: %v", r)
	}
	if r := rows[4]; r["project"] != "bad" || r["state"] != "invalid" || r["id"] != nil || !strings.Contains(r["reason"].(string), "script: required") {
		t.Fatalf("bad: %v", r)
	}
	if r := rows[7]; r["reuseport"] != nil {
		t.Fatalf("web-2: %v", r)
	}
	if r := rows[8]; r["state"] != "errored" || r["reason"] != "reuseport_missing" || r["reuseport"] != "missing" {
		t.Fatalf("zeta: %v", r)
	}
	// Keys come out in a fixed order.
	if !strings.HasPrefix(te.stdout.String(), "[\n  {\n    \"project\": \"api\",\n    \"id\": 0,\n    \"unit\": ") {
		t.Fatalf("JSON:\n%s", te.stdout.String())
	}
}

// HEALTH is the health check's word for each online instance's current
// run, from the state file its service writes: the count of an
// unhealthy one, pending for a run not checked yet (an entry of an
// earlier run does not count), stale when the checks stopped; "-"
// without health_path and for an instance that is not online.
func TestListHealth(t *testing.T) {
	te := newTestEnv(t)
	te.paths.RunStateDir = filepath.Join(te.root, "run", "bm2")
	te.write("etc/bm2/hc.toml", "name = \"hc\"\nscript = \"a.js\"\ncwd = \"/srv/hc\"\ninstances = 6\nport = 3000\nhealth_path = \"/healthz\"\nhealth_port = 3100\n")
	te.write("etc/bm2/plain.toml", "name = \"plain\"\nscript = \"a.js\"\ncwd = \"/srv/plain\"\nport = 4000\nexec_mode = \"fork\"\n")
	now := te.now
	for i := 0; i < 5; i++ {
		te.sd.set(UnitStatus{Name: fmt.Sprintf("bm2@hc-%d.service", i), ActiveState: "active", SubState: "running", MainPID: uint32(100 + i),
			InvocationID: fmt.Sprintf("run%d", i), ActiveEnter: now.Add(-time.Minute), MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	}
	te.sd.set(UnitStatus{Name: "bm2@hc-5.service", ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	te.sd.set(UnitStatus{Name: "bm2@plain-0.service", ActiveState: "active", SubState: "running", MainPID: 200, ActiveEnter: now.Add(-time.Minute), MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown})
	st := health.State{Project: "hc", Instances: []health.Entry{
		{Instance: "hc-0", Invocation: "run0", Status: health.Healthy, Limit: 3, Last: "200", Checked: now.Add(-2 * time.Second)},
		{Instance: "hc-1", Invocation: "run1", Status: health.Unhealthy, Failures: 2, Limit: 3, Last: "timeout", Checked: now.Add(-2 * time.Second)},
		{Instance: "hc-2", Invocation: "run2", Status: health.Starting, Limit: 3, Last: "refused", Checked: now.Add(-2 * time.Second)},
		{Instance: "hc-3", Invocation: "earlier", Status: health.Healthy, Limit: 3, Last: "200", Checked: now.Add(-2 * time.Second)},
		{Instance: "hc-4", Invocation: "run4", Status: health.Healthy, Limit: 3, Last: "200", Checked: now.Add(-time.Hour)},
	}}
	dir := filepath.Join(te.paths.RunStateDir, "health", "hc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := health.Write(health.Path(dir), st); err != nil {
		t.Fatal(err)
	}
	te.mustRun(ExitOK, "list")
	var got []string
	lines := strings.Split(strings.TrimSpace(te.stdout.String()), "\n")
	from, to := strings.Index(lines[0], "REUSEPORT"), strings.Index(lines[0], "RESTARTS")
	for _, line := range lines {
		f := strings.Fields(line)
		got = append(got, f[0]+" "+f[1]+" "+strings.Join(strings.Fields(line[from:to]), " "))
	}
	want := []string{
		"PROJECT ID REUSEPORT HEALTH",
		"hc 0 pending healthy",
		"hc 1 pending unhealthy 2/3",
		"hc 2 pending starting",
		"hc 3 pending pending",
		"hc 4 pending stale",
		"hc 5 - -",
		"plain 0 - -",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("columns:\n%s\nwant:\n%s\n\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), te.stdout.String())
	}
	te.mustRun(ExitOK, "list", "--json")
	var rows []map[string]any
	if err := json.Unmarshal(te.stdout.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if r := rows[1]; r["health"] != "unhealthy" || r["health_failures"] != 2.0 || r["health_limit"] != 3.0 || r["health_last"] != "timeout" {
		t.Errorf("hc-1: %v", r)
	}
	if r := rows[3]; r["health"] != "pending" || r["health_failures"] != nil || r["health_last"] != nil {
		t.Errorf("hc-3: %v", r)
	}
	if r := rows[6]; r["health"] != nil {
		t.Errorf("plain-0: %v", r)
	}
}

func TestListWithoutSystemd(t *testing.T) {
	te := listEnv(t)
	te.noSD = true
	te.mustRun(ExitOK, "list")
	out := te.stdout.String()
	if !strings.Contains(out, "api      0   cluster  unknown") || !strings.Contains(out, "zeta     0   cluster  errored") {
		t.Fatalf("stdout:\n%s", out)
	}
	if !strings.Contains(te.stderr.String(), "bm2: warning: systemd is not reachable") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

func TestListEmpty(t *testing.T) {
	te := newTestEnv(t)
	te.mustRun(ExitOK, "list", "--json")
	if te.stdout.String() != "[]\n" {
		t.Fatalf("stdout %q", te.stdout.String())
	}
	te.mustRun(ExitOK, "list")
	if !strings.HasPrefix(te.stdout.String(), "PROJECT") || !strings.Contains(te.stderr.String(), "no projects registered") {
		t.Fatalf("stdout %q stderr %q", te.stdout.String(), te.stderr.String())
	}
}
