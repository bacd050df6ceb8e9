package metrics

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var update = flag.Bool("update", false, "rewrite testdata/exposition.golden")

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// wideName is the widest project name config accepts: 64 characters, all
// of its alphabet, as many '-' and '_' as letters.
var wideName = strings.Repeat("0-_z", 16)

func project(t *testing.T, name, body string) *config.Project {
	t.Helper()
	p, err := config.Parse("/etc/bm2/"+name+".toml", []byte(fmt.Sprintf("name = %q\nscript = \"s.js\"\ncwd = \"/srv/%s\"\n%s", name, name, body)),
		config.Options{NumCPU: 2})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func online(name, invocation string, pid uint32, start time.Time) view.UnitStatus {
	return view.UnitStatus{Name: name, LoadState: "loaded", ActiveState: "active", SubState: "running", Result: "success",
		MainPID: pid, InvocationID: invocation, ExecMainStart: start, ActiveEnter: start.Add(50 * time.Millisecond),
		MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown, TasksCurrent: view.Unknown}
}

func with(u view.UnitStatus, mem, cpu, tasks uint64, restarts uint32) view.UnitStatus {
	u.MemoryCurrent, u.CPUUsageNSec, u.TasksCurrent, u.NRestarts = mem, cpu, tasks, restarts
	return u
}

func down(name, active, sub, result string, restarts uint32) view.UnitStatus {
	return view.UnitStatus{Name: name, LoadState: "loaded", ActiveState: active, SubState: sub, Result: result, NRestarts: restarts,
		InvocationID: "00", ExecMainStart: t0.Add(-time.Hour), MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown, TasksCurrent: view.Unknown}
}

func entry(p *config.Project) config.Entry {
	return config.Entry{Name: p.Name, Path: "/etc/bm2/" + p.Name + ".toml", Project: p}
}

// fixture is a host with every kind of instance: cluster and fork, online,
// restarting, errored by systemd and by bm2, a surge, states unknown, an
// invalid project, figures known and not.
func fixture(t *testing.T) (view.Snapshot, view.Figures) {
	api := project(t, "api", "instances = 3\nport = 3000\nhealth_path = \"/healthz\"\nhealth_port = 3100\n")
	web := project(t, "web", "instances = 2\nport = 4000\nexec_mode = \"fork\"\n")
	zeta := project(t, "zeta", "port = 5000\n")
	norm := project(t, "norm", "port = 6000\nexec_mode = \"fork\"\n")
	wide := project(t, wideName, "port = 7000\n")
	snap := view.Snapshot{
		Now: t0.Add(10 * time.Minute),
		Projects: []view.ProjectSnapshot{
			{Entry: entry(api), IDs: []int{0, 1, 2, units.Surge}, Statuses: []view.UnitStatus{
				with(online("bm2@api-0.service", "aa", 1234, t0), 43201331, 1_300_000_000, 11, 0),
				with(online("bm2@api-1.service", "bb", 1240, t0.Add(time.Second)), view.Unknown, 250_000_000, view.Unknown, 1),
				down("bm2@api-2.service", "activating", "auto-restart", "exit-code", 3),
				with(online("bm2@api-surge.service", "cc", 1300, t0.Add(2*time.Minute)), 1<<20, 10_000_000, 7, 0),
			}, Marks: map[int]state.Mark{}, Health: &health.State{Project: "api", Instances: []health.Entry{
				// api-0 healthy, api-1 failing, the surge not checked yet.
				{Instance: "api-0", Invocation: "aa", Status: health.Healthy, Limit: 3, Checked: t0.Add(10*time.Minute - time.Second)},
				{Instance: "api-1", Invocation: "bb", Status: health.Unhealthy, Failures: 2, Limit: 3, Checked: t0.Add(10*time.Minute - time.Second)},
			}}},
			{Entry: config.Entry{Name: "bad", Path: "/etc/bm2/bad.toml", Err: errors.New("/etc/bm2/bad.toml: line 2: port: required")}},
			{Entry: entry(norm), IDs: []int{0}, Warning: "norm: read errored state: permission denied"},
			{Entry: entry(web), IDs: []int{0, 1}, Statuses: []view.UnitStatus{
				with(online("bm2@web-0.service", "dd", 77, t0.Add(-26*time.Hour)), 2<<30, 90_000_000_000, 23, 2),
				down("bm2@web-1.service", "failed", "failed", "signal", 1),
			}, Marks: map[int]state.Mark{}},
			{Entry: entry(wide), IDs: []int{0}, Statuses: []view.UnitStatus{
				with(online(units.Instance(wideName, 0), "ee", 900, t0), 5<<20, 1_000_000, 3, 0),
			}, Marks: map[int]state.Mark{}},
			{Entry: entry(zeta), IDs: []int{0}, Statuses: []view.UnitStatus{
				down("bm2@zeta-0.service", "inactive", "dead", "success", 0),
			}, Errored: true, Mark: "reuseport_missing"},
		},
		Events: []journal.Event{
			{Kind: journal.ReuseportConfirmed, Project: "api", Instance: "api-0", Invocation: "aa", Time: t0.Add(1250 * time.Millisecond)},
			{Kind: journal.ReuseportConfirmed, Project: wideName, Instance: units.InstanceID(wideName, 0), Invocation: "ee", Time: t0.Add(2 * time.Second)},
		},
		EventsRead: true,
	}
	figs := view.Figures{Projects: [][]view.InstanceFigures{
		{
			{Connections: 17, AcceptQueued: 2, AcceptLimit: 511, ConfirmLatency: 1250 * time.Millisecond},
			view.UnknownFigures, // another user's processes
			view.UnknownFigures,
			{Connections: 0, AcceptQueued: 0, AcceptLimit: 511},
		},
		nil,
		nil,
		{{Connections: 3, AcceptQueued: 0, AcceptLimit: 4096}, view.UnknownFigures},
		{{Connections: 1, AcceptQueued: -1, AcceptLimit: -1, ConfirmLatency: 2 * time.Second}},
		{view.UnknownFigures},
	}}
	return snap, figs
}

var build = Build{Version: "1.4.0", GoVersion: "go1.26.8"}

func TestGolden(t *testing.T) {
	snap, figs := fixture(t)
	got, err := Text(snap, figs, build)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Text(snap, figs, build)
	if err != nil || !bytes.Equal(got, again) {
		t.Fatalf("two expositions of one snapshot differ (%v)", err)
	}
	path := filepath.Join("testdata", "exposition.golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./internal/metrics -update` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run `go test ./internal/metrics -update` and review the diff):\n%s", path, testutil.FirstDifference(want, got))
	}
}

// parse reads an exposition back as a scraper would.
func parse(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, text)
	}
	return fams
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	}
	return m.GetUntyped().GetValue()
}

// series are a family's series of one instance.
func series(fams map[string]*dto.MetricFamily, name, instance string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range fams[name].GetMetric() {
		if labels(m)["instance"] == instance {
			out = append(out, m)
		}
	}
	return out
}

func TestWhatAScraperReads(t *testing.T) {
	snap, figs := fixture(t)
	text, err := Text(snap, figs, build)
	if err != nil {
		t.Fatal(err)
	}
	fams := parse(t, text)

	// Every instance of every valid project is up or not, in exactly one
	// state, with its project and mode; an invalid project has none.
	n := 0
	for _, ps := range snap.Projects {
		p := ps.Entry.Project
		if p == nil {
			continue
		}
		for _, i := range ps.IDs {
			id := units.InstanceID(p.Name, i)
			n++
			up := series(fams, "bm2_instance_up", id)
			if len(up) != 1 {
				t.Errorf("%s: %d bm2_instance_up series", id, len(up))
				continue
			}
			if l := labels(up[0]); l["project"] != p.Name || l["mode"] != string(p.Mode) {
				t.Errorf("%s: labels %v", id, l)
			}
			states := series(fams, "bm2_instance_state", id)
			var current []string
			for _, m := range states {
				if value(m) == 1 {
					current = append(current, labels(m)["state"])
				}
			}
			if len(states) != len(view.InstanceStates) || len(current) != 1 {
				t.Errorf("%s: %d state series, current %q", id, len(states), current)
			}
			if (value(up[0]) == 1) != (len(current) == 1 && current[0] == view.StateOnline) {
				t.Errorf("%s: up %v in state %q", id, value(up[0]), current)
			}
		}
	}
	if got := len(fams["bm2_instance_up"].GetMetric()); got != n {
		t.Errorf("%d bm2_instance_up series for %d instances", got, n)
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			if labels(m)["project"] == "bad" {
				t.Errorf("%s has a series of the invalid project", name)
			}
		}
	}

	// Known figures are there with their value, a known 0 too; unknown
	// ones are not.
	for _, c := range []struct {
		name, instance string
		want           float64 // -1: absent
	}{
		{"bm2_instance_memory_bytes", "api-0", 43201331},
		{"bm2_instance_memory_bytes", "api-1", -1},
		{"bm2_instance_cpu_seconds_total", "api-0", 1.3},
		{"bm2_instance_cpu_seconds_total", "api-2", -1},
		{"bm2_instance_tasks", "api-0", 11},
		{"bm2_instance_tasks", "api-1", -1},
		{"bm2_instance_restarts", "api-2", 3},
		{"bm2_instance_restarts", "norm-0", -1}, // systemd did not answer
		{"bm2_instance_start_time_seconds", "api-1", float64(t0.Add(time.Second).Unix())},
		{"bm2_instance_start_time_seconds", "api-2", -1}, // no main process
		{"bm2_instance_connections", "api-0", 17},
		{"bm2_instance_connections", "api-1", -1},
		{"bm2_instance_connections", "api-surge", 0},
		{"bm2_instance_accept_queue_length", "api-0", 2},
		{"bm2_instance_accept_queue_length", "api-surge", 0},
		{"bm2_instance_accept_queue_limit", "web-0", 4096},
		{"bm2_instance_accept_queue_limit", units.InstanceID(wideName, 0), -1},
		{"bm2_probe_confirm_seconds", "api-0", 1.25},
		{"bm2_probe_confirm_seconds", "api-surge", -1},
	} {
		s := series(fams, c.name, c.instance)
		switch {
		case c.want < 0 && len(s) != 0:
			t.Errorf("%s{instance=%q} = %v, want it absent (unknown)", c.name, c.instance, value(s[0]))
		case c.want >= 0 && (len(s) != 1 || value(s[0]) != c.want):
			t.Errorf("%s{instance=%q}: %d series, want one of %v", c.name, c.instance, len(s), c.want)
		}
	}
	if fams["bm2_instance_cpu_seconds_total"].GetType() != dto.MetricType_COUNTER {
		t.Error("CPU time is not a counter")
	}

	// The verdict is bm2 list's, for cluster mode only.
	verdict := func(id string) string {
		var v []string
		for _, m := range series(fams, "bm2_instance_reuseport", id) {
			if value(m) == 1 {
				v = append(v, labels(m)["verdict"])
			}
		}
		return strings.Join(v, ",")
	}
	for id, want := range map[string]string{"api-0": "confirmed", "api-1": "pending", "api-2": "", "api-surge": "pending",
		"zeta-0": "missing", "web-0": "", "norm-0": ""} {
		if got := verdict(id); got != want {
			t.Errorf("%s: verdict %q, want %q", id, got, want)
		}
	}
	if got := len(series(fams, "bm2_instance_reuseport", "api-0")); got != len(view.ReuseportVerdicts) {
		t.Errorf("api-0: %d verdict series, want %d", got, len(view.ReuseportVerdicts))
	}

	// Projects: errored or not (unknown when the mark could not be
	// read), and the instances asked for.
	errored := map[string]float64{}
	for _, m := range fams["bm2_project_errored"].GetMetric() {
		errored[labels(m)["project"]] = value(m)
	}
	if fmt.Sprint(errored) != fmt.Sprint(map[string]float64{"api": 0, "web": 0, "zeta": 1, wideName: 0}) {
		t.Errorf("bm2_project_errored %v", errored)
	}
	instances := map[string]string{}
	for _, m := range fams["bm2_project_instances"].GetMetric() {
		instances[labels(m)["project"]] = fmt.Sprint(labels(m)["mode"], " ", value(m))
	}
	if instances["api"] != "cluster 3" || instances["web"] != "fork 2" || instances["norm"] != "fork 1" || len(instances) != 5 {
		t.Errorf("bm2_project_instances %v", instances)
	}
	b := fams["bm2_build_info"].GetMetric()
	if len(b) != 1 || labels(b[0])["version"] != "1.4.0" || labels(b[0])["goversion"] != "go1.26.8" || value(b[0]) != 1 {
		t.Errorf("bm2_build_info %v", b)
	}
}

func TestLint(t *testing.T) {
	snap, figs := fixture(t)
	fams, err := Families(snap, figs, build)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(fams).Lint()
	if err != nil || len(problems) != 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
	// Every series bm2 has is in the fixture, and has its help.
	var names []string
	for _, f := range fams {
		names = append(names, f.GetName())
		if len(f.GetHelp()) < 20 {
			t.Errorf("%s: help %q", f.GetName(), f.GetHelp())
		}
	}
	for _, d := range allDescs {
		name := strings.Split(d.String(), "\"")[1] // Desc{fqName: "NAME", ...}
		if !slices.Contains(names, name) {
			t.Errorf("the fixture has no %s series: the golden file does not show it", name)
		}
	}
}

func TestLabelsAreEscaped(t *testing.T) {
	// Project names cannot hold a quote or a newline (config's rule), but
	// a version set at link time can: expfmt escapes it, and a scraper
	// reads back what it was.
	odd := Build{Version: "1.0 \"rc\" \\ \nnext", GoVersion: "go1.26.8"}
	snap, figs := fixture(t)
	text, err := Text(snap, figs, odd)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(text, []byte(`version="1.0 \"rc\" \\ \nnext"`)) {
		t.Errorf("version not escaped:\n%s", text)
	}
	b := parse(t, text)["bm2_build_info"].GetMetric()
	if len(b) != 1 || labels(b[0])["version"] != odd.Version {
		t.Errorf("read back %v", b)
	}
	// The widest legal project name is a label as it is.
	if s := series(parse(t, text), "bm2_instance_up", units.InstanceID(wideName, 0)); len(s) != 1 || labels(s[0])["project"] != wideName {
		t.Errorf("%s: %v", wideName, s)
	}
	// A label that is not UTF-8 is refused, not written.
	if _, err := Text(snap, figs, Build{Version: "\xff"}); err == nil {
		t.Error("a version that is not UTF-8 was written")
	}
}

func TestNothingRegistered(t *testing.T) {
	// No project: the build's version alone.
	text, err := Text(view.Snapshot{}, view.Figures{}, build)
	if err != nil {
		t.Fatal(err)
	}
	fams := parse(t, text)
	if len(fams) != 1 || fams["bm2_build_info"] == nil {
		t.Errorf("families %v", fams)
	}
}
