package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/generator"
	"github.com/bm2dev/bm2/internal/analyze"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// fakeSystemd is an in-memory systemd: Reload runs the real generator over
// the search path and loads what it produced; jobs change unit states the
// way systemd would for bm2's units (targets want their instances,
// instances are PartOf their target, the errored mark is a start
// condition).
type fakeSystemd struct {
	mu       sync.Mutex
	dirs     []string  // search path the "generator" reads
	stateDir state.Dir // for ConditionPathExists=!errored mark
	now      func() time.Time

	units   map[string]*UnitStatus
	wants   map[string][]string // target -> instances
	calls   []string
	nextPID uint32
	// reads is every Units call's names, in order (comma-joined).
	reads []string

	fail  map[string]UnitStatus // instance -> the state it ends up in when started
	stuck map[string]bool       // instance -> stays activating/auto-restart
	fresh map[string]bool       // instance -> (re)started just now, every time it is looked at

	cluster     map[string]bool     // project -> cluster mode, as of the last Reload
	env         map[string][]string // instance -> BM2_EXEC_MODE and BM2_APP_PORT, as of the last Reload
	nextInvoke  int                 // InvocationIDs
	onStart     func(unit string)   // called (locked) after an instance came online
	onStartUnit []string            // instances started since the last onStart drain

	beforeReload func() // called (unlocked) as Reload begins: files written behind bm2's back
	// onHealth plays one run of a project's health service (called
	// locked, with the project's name, at each start of it); nil: the
	// service does nothing.
	onHealth func(project string)

	next map[string]time.Time // restart timer -> its NextElapse while it runs (zero: never)
}

func newFakeSystemd(dirs []string, st state.Dir, now func() time.Time) *fakeSystemd {
	return &fakeSystemd{
		dirs: dirs, stateDir: st, now: now,
		units: map[string]*UnitStatus{}, wants: map[string][]string{},
		nextPID: 1000, fail: map[string]UnitStatus{}, stuck: map[string]bool{}, fresh: map[string]bool{},
		cluster: map[string]bool{}, env: map[string][]string{}, next: map[string]time.Time{},
	}
}

func (f *fakeSystemd) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// Calls returns the calls made so far and forgets them.
func (f *fakeSystemd) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func (f *fakeSystemd) unit(name string) *UnitStatus {
	u, ok := f.units[name]
	if !ok {
		u = &UnitStatus{Name: name, LoadState: "not-found", ActiveState: "inactive", SubState: "dead",
			MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown}
		f.units[name] = u
	}
	return u
}

// set puts a unit into a given state (for list tests).
func (f *fakeSystemd) set(u UnitStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u.LoadState == "" {
		u.LoadState = "loaded"
	}
	f.units[u.Name] = &u
}

func (f *fakeSystemd) Reload(ctx context.Context) error {
	if f.beforeReload != nil {
		f.beforeReload()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("reload")
	found := config.Discover(f.dirs)
	res := generator.Generate(found.Sources, generator.Options{NumCPU: 2})
	loaded := map[string]bool{}
	f.wants = map[string][]string{}
	f.cluster = map[string]bool{}
	f.env = map[string][]string{}
	for _, p := range res.Projects {
		f.cluster[p.Name] = p.Mode == config.Cluster
		t := units.Target(p.Name)
		loaded[t] = true
		for i := 0; i < p.Instances; i++ {
			n := units.Instance(p.Name, i)
			loaded[n] = true
			f.wants[t] = append(f.wants[t], n)
			f.env[n] = []string{"BM2_EXEC_MODE=" + string(p.Mode), fmt.Sprintf("BM2_APP_PORT=%d", p.InstancePort(i))}
			if p.HealthChecked() {
				f.env[n] = append(f.env[n], fmt.Sprintf("BM2_HEALTH_PORT=%d", p.HealthPort(i)))
			}
		}
		if p.Mode == config.Cluster {
			n := units.Instance(p.Name, units.Surge)
			loaded[n] = true // wanted by nobody
			f.env[n] = []string{"BM2_EXEC_MODE=cluster", fmt.Sprintf("BM2_APP_PORT=%d", p.Port), "BM2_APP_SURGE=1"}
		}
		if p.HealthChecked() {
			// The health timer, in the target's .wants, and its service.
			loaded[units.HealthTimer(p.Name)], loaded[units.HealthService(p.Name)] = true, true
			f.wants[t] = append(f.wants[t], units.HealthTimer(p.Name))
		}
		if p.MemoryWatched() {
			// The memory timer, in the target's .wants, and its service.
			loaded[units.MemoryTimer(p.Name)], loaded[units.MemoryService(p.Name)] = true, true
			f.wants[t] = append(f.wants[t], units.MemoryTimer(p.Name))
		}
		if p.RestartSchedule != "" {
			// The restart timer, in the target's .wants, and its service.
			loaded[units.RestartTimer(p.Name)], loaded[units.RestartService(p.Name)] = true, true
			f.wants[t] = append(f.wants[t], units.RestartTimer(p.Name))
		}
	}
	for name, u := range f.units {
		u.NeedDaemonReload = false
		if u.UnitFileState != "" {
			continue // one of the host's own units (set)
		}
		if loaded[name] {
			u.LoadState = "loaded"
			continue
		}
		u.LoadState = "not-found"
		if u.ActiveState == "inactive" {
			delete(f.units, name) // garbage-collected
		}
	}
	for name := range loaded {
		f.unit(name).LoadState = "loaded"
	}
	return nil
}

func (f *fakeSystemd) startInstance(name string) {
	u := f.unit(name)
	if strings.HasSuffix(name, ".timer") {
		// A timer waits for its next elapse.
		u.ActiveState, u.SubState, u.NextElapse = "active", "waiting", f.next[name]
		return
	}
	proj, _, _ := units.ParseInstance(name)
	if _, errored, _ := f.stateDir.Errored(proj); errored {
		return // condition failed: stays inactive
	}
	if _, errored, _ := f.stateDir.InstanceErrored(strings.TrimSuffix(strings.TrimPrefix(name, "bm2@"), ".service")); errored {
		return // the instance's own condition
	}
	if u.ActiveState == "active" {
		return
	}
	if st, ok := f.fail[name]; ok {
		st.Name, st.LoadState = name, "loaded"
		*u = st
		return
	}
	if f.stuck[name] {
		u.ActiveState, u.SubState, u.Result, u.MainPID = "activating", "auto-restart", "exit-code", 0
		u.ExecMainCode, u.ExecMainStatus = 1, 1
		u.NRestarts++
		return
	}
	u.Environment = f.env[name]
	f.nextPID++
	f.nextInvoke++
	u.ActiveState, u.SubState, u.Result, u.MainPID = "active", "running", "success", f.nextPID
	u.ActiveEnter = f.now().Add(-10 * time.Second) // jobs are instant; say it started a while ago
	u.InvocationID = fmt.Sprintf("%032x", f.nextInvoke)
	u.MemoryCurrent, u.CPUUsageNSec = 40<<20, 1e9
	// The account it runs as: not known to this fake (a test that needs
	// one sets it), never root by default.
	if u.UID == 0 {
		u.UID, u.GID = sysd.NoID, sysd.NoID
	}
	if f.onStart != nil {
		f.onStart(name)
	}
}

func (f *fakeSystemd) stopInstance(name string) {
	u := f.unit(name)
	if u.ActiveState == "failed" {
		return
	}
	u.ActiveState, u.SubState, u.MainPID = "inactive", "dead", 0
	u.MemoryCurrent, u.CPUUsageNSec = view.Unknown, view.Unknown
	u.NextElapse = time.Time{}
}

func (f *fakeSystemd) job(verb, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("%s %s", verb, name)
	verb = strings.TrimSuffix(verb, " --no-block")
	if _, ok := f.units[name]; !ok && verb == "stop" {
		return nil
	}
	u := f.unit(name)
	if u.LoadState != "loaded" && verb != "stop" {
		return fmt.Errorf("%s %s: Unit %s not found.", verb, name, name)
	}
	if strings.HasSuffix(name, ".target") {
		proj := strings.TrimSuffix(strings.TrimPrefix(name, "bm2-"), ".target")
		// PartOf= propagates stop and restart to every loaded instance,
		// and to the restart timer.
		var members []string
		for n := range f.units {
			if p, _, ok := units.ParseInstance(n); (ok && p == proj) || n == units.RestartTimer(proj) {
				members = append(members, n)
			}
		}
		sort.Strings(members)
		if verb == "stop" || verb == "restart" {
			for _, n := range members {
				f.stopInstance(n)
			}
			u.ActiveState, u.SubState = "inactive", "dead"
		}
		if verb == "start" || verb == "restart" {
			for _, n := range f.wants[name] {
				f.startInstance(n)
			}
			u.ActiveState, u.SubState = "active", "active"
		}
		return nil
	}
	if proj, ok := strings.CutSuffix(strings.TrimPrefix(name, "bm2-"), "-health.service"); ok && strings.HasPrefix(name, "bm2-") {
		// A oneshot: its run is over when its start job is.
		if verb != "stop" && f.onHealth != nil {
			f.onHealth(proj)
		}
		return nil
	}
	switch verb {
	case "start":
		f.startInstance(name)
	case "stop":
		f.stopInstance(name)
	case "restart":
		f.stopInstance(name)
		f.startInstance(name)
	}
	return nil
}

func (f *fakeSystemd) Start(ctx context.Context, unit string) error   { return f.job("start", unit) }
func (f *fakeSystemd) Stop(ctx context.Context, unit string) error    { return f.job("stop", unit) }
func (f *fakeSystemd) Restart(ctx context.Context, unit string) error { return f.job("restart", unit) }
func (f *fakeSystemd) StartQueued(ctx context.Context, unit string) error {
	return f.job("start", unit)
}
func (f *fakeSystemd) StopQueued(ctx context.Context, units ...string) error {
	var errs []error
	for _, unit := range units {
		errs = append(errs, f.job("stop --no-block", unit)) // (the fake's stops are done at once)
	}
	return errors.Join(errs...)
}

func (f *fakeSystemd) ResetFailed(ctx context.Context, unit string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("reset-failed %s", unit)
	if u, ok := f.units[unit]; ok && u.ActiveState == "failed" {
		u.ActiveState, u.SubState, u.Result = "inactive", "dead", "success"
	}
	return nil
}

func (f *fakeSystemd) Units(ctx context.Context, names []string) ([]UnitStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, strings.Join(names, ","))
	out := make([]UnitStatus, len(names))
	for i, n := range names {
		if u, ok := f.units[n]; ok {
			if f.fresh[n] && u.ActiveState == "active" {
				u.ActiveEnter = f.now() // a crash loop caught while running
			}
			out[i] = *u
			if w, ok := f.wants[n]; ok && u.LoadState == "loaded" {
				out[i].Wants = append([]string(nil), w...) // as systemd reports a target's Wants=
			}
		} else {
			out[i] = UnitStatus{Name: n, LoadState: "not-found", ActiveState: "inactive", SubState: "dead",
				MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown}
		}
	}
	return out, nil
}

// Brief is Units with only what sysd's Brief fills in.
func (f *fakeSystemd) Brief(ctx context.Context, names []string) ([]UnitStatus, error) {
	out, err := f.Units(ctx, names)
	for k := range out {
		out[k] = sysd.BriefOf(out[k])
	}
	return out, err
}

func (f *fakeSystemd) Loaded(ctx context.Context, patterns []string) ([]UnitStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []UnitStatus
	for name, u := range f.units {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				out = append(out, *u)
				break
			}
		}
	}
	sortUnits(out)
	return out, nil
}

func (f *fakeSystemd) Close() error { return nil }

// testEnv is a throw-away host: a config dir on the search path, a state
// dir, a bin dir with fake runtimes, and a fake systemd.
type testEnv struct {
	t          *testing.T
	root       string
	paths      testPaths
	bin        string
	sd         *fakeSystemd
	noSD       bool   // Connect fails
	accounting string // what Accounting says of the host's control groups
	searchPath []string
	journal    map[string][]string
	entries    *fakeJournal
	probe      map[string]string // instance -> what its reusePort probe finds: "missing", "none"; default confirmed
	// verdicts, when not nil, is the probe's verdict files (Env.ReadVerdict):
	// a confirmation goes there, by instance, and not to the journal.
	verdicts   map[string]journal.Event
	verdictsMu sync.Mutex
	// lateVerdicts: a confirmation is written only once a wait has
	// looked for it and not found it, and said on written (the verdict
	// directory's watch); a wait reads it once it has taken that signal.
	// readBetween has, by instance, the Units reads made between that
	// wait's last look at the files and the one that found it.
	lateVerdicts bool
	pending      map[string]journal.Event
	written      chan struct{}
	armed        map[string]journal.Event
	lastLook     map[string]int
	readBetween  map[string][]string
	listening    map[uint32]bool   // pid -> not listening when false
	access       map[string]error  // path -> what Access says; nil for any other
	enters       map[string]string // path -> the account Access lets in, whatever access says
	owners       map[string]int    // path -> its owner's uid (PathOwner); an error for any other
	now          time.Time
	stdout       bytes.Buffer
	stderr       bytes.Buffer
	layout       *layout.Layout // nil: system scope
	sysPath      []string       // user scope: where system projects are
	minPort      *int           // user scope: net.ipv4.ip_unprivileged_port_start
	fenceErr     error          // why the host cannot fence ports; nil: it can
	// systemdVersion is the host's systemd version (Env.SystemdVersion);
	// 0, not known, by default.
	systemdVersion int
	fenced         map[string]error // control group -> nil: fenced; absent: not fenced
	// speaker is who the files bm2 reads outside the config dir speak
	// for (trust.File.Speaker): 0, root, by default; reads counts the
	// reads of each path.
	speaker int
	readsMu sync.Mutex
	reads   map[string]int
	// replaceable names who can replace a runtime binary (by path); none
	// when absent.
	replaceable map[string]string
	// confined answers the confined version checks, and records them.
	confined    func(p *config.Project, path string) (string, error)
	confinedLog []string
	// versionLog records the runtimes asked for their version as an
	// account (RuntimeVersion), "uid path".
	versionMu  sync.Mutex
	versionLog []string
	// sockets is the host's sockets for bm2 metrics: by default no
	// process of any instance is there to be read.
	sockets *fakeSockets
	// lookupUser replaces LookupUser (identity.Self by default).
	lookupUser func(name string) identity.Identity
	// diskUsage is what journalctl --disk-usage says (DiskUsage): 0
	// bytes by default.
	diskUsage    int64
	diskUsageErr error
	// calendar answers as systemd-analyze calendar would (Calendar);
	// nil: there is no systemd-analyze.
	calendar func(expr string) (string, error)
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	root := t.TempDir()
	te := &testEnv{
		t:    t,
		root: root,
		paths: testPaths{
			ConfigDir: filepath.Join(root, "etc", "bm2"),
			StateDir:  filepath.Join(root, "var", "lib", "bm2"),
			LockFile:  filepath.Join(root, "run", "bm2", "registry.lock"),
			LogDir:    filepath.Join(root, "var", "log", "bm2"),
		},
		bin:       filepath.Join(root, "bin"),
		journal:   map[string][]string{},
		entries:   &fakeJournal{},
		probe:     map[string]string{},
		listening: map[uint32]bool{},
		access:    map[string]error{},
		now:       time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		sockets:   &fakeSockets{},
	}
	te.searchPath = []string{te.paths.ConfigDir, filepath.Join(root, "usr", "lib", "bm2")}
	te.sd = newFakeSystemd(te.searchPath, state.Dir{Path: te.paths.StateDir}, func() time.Time { return te.now })
	te.runtime("bun", "1.4.4")
	te.runtime("node", "v24.1.0")
	te.sd.onStart = te.probeRun
	return te
}

// probeRun plays the reusePort probe of a cluster-mode instance that just
// came online (called with the fake systemd locked): by default it logs
// reuseport_confirmed; te.probe can make it find the port exclusive (it
// marks the project errored and stops its instances, as the real one does)
// or say nothing.
func (te *testEnv) probeRun(unit string) {
	proj, i, _ := units.ParseInstance(unit)
	if !te.sd.cluster[proj] {
		return
	}
	id := units.InstanceID(proj, i)
	at := te.now.Add(-9 * time.Second) // after ActiveEnter (now - 10 s)
	switch te.probe[unit] {
	case "none":
	case "missing":
		te.entries.event(at, journal.ReuseportMissing, proj, id, "reuseport_missing",
			id+": port 3000 is bound exclusively: cluster mode lacks reusePort; stopping project "+proj)
		(state.Dir{Path: te.paths.StateDir}).SetErrored(proj, "reuseport_missing")
		for n := range te.sd.units {
			if p, _, ok := units.ParseInstance(n); ok && p == proj {
				te.sd.stopInstance(n)
			}
		}
	default:
		msg := id + ": port 3000 is shared with SO_REUSEPORT: cluster mode confirmed"
		if te.verdicts != nil {
			ev := journal.Event{Kind: journal.ReuseportConfirmed, Project: proj, Instance: id, Message: msg,
				Time: at, Invocation: te.sd.units[unit].InvocationID}
			te.verdictsMu.Lock()
			if te.lateVerdicts {
				te.pending[id] = ev
			} else {
				te.verdicts[id] = ev
			}
			te.verdictsMu.Unlock()
			return
		}
		te.entries.event(at, journal.ReuseportConfirmed, proj, id, "", msg)
	}
}

// fakeJournal is an in-memory journal with journalctl's selection rules.
type fakeJournal struct {
	mu      sync.Mutex
	entries []journal.Entry
	// err is what every read returns when set (journal.ErrRestricted:
	// a reader outside adm).
	err     error
	queries []journal.Query
	uid     string // who writes bm2's events: "0", or the user in user scope
}

func (j *fakeJournal) add(e journal.Entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, e)
}

// event logs one of bm2's events.
func (j *fakeJournal) event(at time.Time, kind journal.Kind, project, instance, reason, msg string) {
	e := journal.Entry{
		"__REALTIME_TIMESTAMP": fmt.Sprint(at.UnixMicro()),
		"SYSLOG_IDENTIFIER":    journal.Identifier,
		"_UID":                 j.writer(),
		"_TRANSPORT":           "journal",
		"MESSAGE":              msg,
		"PRIORITY":             fmt.Sprint(int(kind.Priority())),
		"MESSAGE_ID":           kind.MessageID(),
		"BM2_EVENT":            string(kind),
		"BM2_PROJECT":          project,
		"BM2_LEVEL":            kind.Level(),
	}
	if instance != "" {
		e["BM2_INSTANCE"] = instance
	}
	if reason != "" {
		e["BM2_REASON"] = reason
	}
	j.add(e)
}

func (j *fakeJournal) writer() string {
	if j.uid == "" {
		return "0"
	}
	return j.uid
}

// line logs a line of an instance's output.
func (j *fakeJournal) line(at time.Time, unit, msg string) {
	id := strings.TrimSuffix(strings.TrimPrefix(unit, "bm2@"), ".service")
	j.add(journal.Entry{"__REALTIME_TIMESTAMP": fmt.Sprint(at.UnixMicro()), "_SYSTEMD_UNIT": unit,
		"SYSLOG_IDENTIFIER": id, "MESSAGE": msg, "PRIORITY": "6", "_PID": "4242"})
}

func (j *fakeJournal) read(ctx context.Context, q journal.Query, each func(journal.Entry) error) error {
	j.mu.Lock()
	j.queries = append(j.queries, q)
	if j.err != nil {
		j.mu.Unlock()
		return j.err
	}
	// matches tells whether e matches a group of FIELD=VALUE matches
	// (values of one field are alternatives).
	matches := func(e journal.Entry, group []string) bool {
		byField := map[string][]string{}
		for _, m := range group {
			k, v, _ := strings.Cut(m, "=")
			byField[k] = append(byField[k], v)
		}
		for k, vs := range byField {
			if !slices.Contains(vs, e[k]) {
				return false
			}
		}
		return true
	}
	var since int64
	if strings.HasPrefix(q.Since, "@") { // other forms select everything
		var sec, usec int64
		if _, err := fmt.Sscanf(q.Since, "@%d.%06d", &sec, &usec); err != nil {
			j.mu.Unlock()
			return fmt.Errorf("fake journal: --since %q", q.Since)
		}
		since = sec*1e6 + usec
	}
	var out []journal.Entry
	for _, e := range j.entries {
		trust := "0"
		if q.User != "" {
			trust = q.User
		}
		ok := !q.BM2 || journal.TrustedFrom(e, trust) && (e["_UID"] == trust || q.Generator)
		found := matches(e, q.Matches)
		for _, g := range q.Or {
			found = found || matches(e, g)
		}
		ok = ok && found
		if len(q.Units) > 0 {
			found := false
			for _, u := range q.Units {
				// journalctl -u: the unit's processes, the manager about
				// it (left out with NoManager), root about it.
				found = found || e["_SYSTEMD_UNIT"] == u || (e["UNIT"] == u && !q.NoManager) ||
					(e[journal.FieldObjectUnit] == u && e["_UID"] == trust)
			}
			ok = ok && found
		}
		if q.Grep != "" { // journalctl's PCRE2, near enough
			re, err := regexp.Compile(q.Grep)
			if err != nil {
				j.mu.Unlock()
				return fmt.Errorf("%w %q: %v", journal.ErrPattern, q.Grep, err)
			}
			ok = ok && re.MatchString(e["MESSAGE"])
		}
		if ts := e.Time().UnixMicro(); ok && ts >= since {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Time().Before(out[b].Time()) })
	if q.Lines > 0 && len(out) > q.Lines {
		out = out[len(out)-q.Lines:]
	}
	j.mu.Unlock()
	for _, e := range out {
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

// runtime puts a fake runtime into the bin dir that prints version.
func (te *testEnv) runtime(name, version string) string {
	te.t.Helper()
	if err := os.MkdirAll(te.bin, 0o755); err != nil {
		te.t.Fatal(err)
	}
	p := filepath.Join(te.bin, name)
	script := fmt.Sprintf("#!/bin/sh\necho %s\n", version)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		te.t.Fatal(err)
	}
	return p
}

// write creates a file under root and returns its path.
func (te *testEnv) write(rel, content string) string {
	te.t.Helper()
	p := filepath.Join(te.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		te.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		te.t.Fatal(err)
	}
	return p
}

// testPaths are the directories of a test's scope, under its root.
type testPaths struct {
	ConfigDir, StateDir, RunStateDir, LockFile, LogDir string
}

func (te *testEnv) app() *App {
	sys := layout.System()
	if te.layout != nil {
		sys = *te.layout
	}
	sys.ConfigDir, sys.StateDir, sys.RunStateDir, sys.LockFile = te.paths.ConfigDir, te.paths.StateDir, te.paths.RunStateDir, te.paths.LockFile
	sys.CrashLogs = crashlog.Logs{Dir: te.paths.LogDir}
	return newApp(Stdio{Out: &te.stdout, Err: &te.stderr}, &control.Client{
		Env: Env{
			Layout:           &sys,
			SystemSearchPath: te.sysPath,
			MinPort:          te.minPort,
			Getenv: func(k string) string {
				if k == config.SearchPathEnv {
					return strings.Join(te.searchPath, ":")
				}
				return ""
			},
			NumCPU:     2,
			Now:        func() time.Time { return te.now },
			Accounting: func(int) string { return te.accounting },
			Connect: func(ctx context.Context) (Systemd, error) {
				if te.noSD {
					return nil, sysd.Unreachable(errors.New("connect to the system bus: dial unix /run/dbus/system_bus_socket: connect: no such file or directory"))
				}
				return te.sd, nil
			},
			Journal: func(ctx context.Context, unit string, n int) ([]string, error) {
				lines := te.journal[unit]
				if len(lines) > n {
					lines = lines[len(lines)-n:]
				}
				return lines, nil
			},
			CheckPorts: func(ctx context.Context, id identity.Identity, ports []int) ([]reuseport.PortState, error) {
				return reuseport.CheckPortsAs(identity.Self(), ports)
			},
			LookupUser: func(ctx context.Context, name, group string) (identity.Identity, error) {
				if te.lookupUser != nil {
					return te.lookupUser(name), nil
				}
				return identity.Self(), nil
			},
			Security: func(ctx context.Context, unit string) (string, error) { return "1.2 OK", nil },
			Calendar: func(ctx context.Context, expr string) (string, error) {
				if te.calendar != nil {
					return te.calendar(expr)
				}
				return "", analyze.ErrNotInstalled
			},
			SteerPins:      filepath.Join(te.root, "bpf", "bm2"),
			FenceSupport:   func() error { return te.fenceErr },
			SystemdVersion: func(context.Context) int { return te.systemdVersion },
			FenceAttached: func(cg string) (bool, error) {
				err, ok := te.fenced[cg]
				return ok && err == nil, err
			},
			Replaceable: func(path string) (string, bool) {
				who, ok := te.replaceable[path]
				return who, ok
			},
			RuntimeVersion: func(ctx context.Context, id identity.Identity, path string) (string, error) {
				te.versionMu.Lock()
				te.versionLog = append(te.versionLog, fmt.Sprintf("%d %s", id.UID, path))
				te.versionMu.Unlock()
				return jsruntime.AskVersionAs(ctx, id, path)
			},
			ConfinedVersion: func(ctx context.Context, p *config.Project, path string) (string, error) {
				te.confinedLog = append(te.confinedLog, p.Name+" "+path)
				if te.confined == nil {
					return "", errors.New("no confined runs in this test")
				}
				return te.confined(p, path)
			},
			ReadJournal: te.entries.read,
			ReadVerdict: func(id string) (journal.Event, bool, error) {
				// te.sd's lock first, never inside verdictsMu: probeRun
				// takes verdictsMu with te.sd locked.
				te.sd.mu.Lock()
				reads := slices.Clone(te.sd.reads)
				te.sd.mu.Unlock()
				te.verdictsMu.Lock()
				defer te.verdictsMu.Unlock()
				ev, ok := te.verdicts[id]
				if !te.lateVerdicts {
					return ev, ok, nil
				}
				n := len(reads)
				between := reads[min(te.lastLook[id], n):n]
				te.lastLook[id] = n
				if a, armed := te.armed[id]; armed && len(te.written) == 0 {
					delete(te.armed, id)
					te.verdicts[id], te.readBetween[id] = a, between
					return a, true, nil
				}
				if p, late := te.pending[id]; late {
					// Written just after this look missed it (it found
					// none, or an earlier run's).
					delete(te.pending, id)
					te.armed[id] = p
					select {
					case te.written <- struct{}{}:
					default: // said already, not yet taken
					}
				}
				return ev, ok, nil
			},
			WatchVerdicts: func() (<-chan struct{}, func()) {
				if te.written != nil {
					return te.written, func() {}
				}
				if te.verdicts == nil {
					return nil, func() {}
				}
				return make(chan struct{}), func() {}
			},
			DiskUsage: func(ctx context.Context) (int64, error) { return te.diskUsage, te.diskUsageErr },
			Listening: func(ctx context.Context, u UnitStatus, port int) (bool, error) {
				if u.MainPID == 0 {
					return false, nil
				}
				l, ok := te.listening[u.MainPID]
				return l || !ok, nil
			},
			Access: func(id identity.Identity, path string, dir bool) error {
				if name, ok := te.enters[path]; ok && name == id.Name {
					return nil
				}
				if err, ok := te.access[path]; ok {
					return err
				}
				return nil
			},
			PathOwner: func(path string) (int, error) {
				if uid, ok := te.owners[path]; ok {
					return uid, nil
				}
				return 0, fs.ErrNotExist
			},
			Sockets:      te.sockets,
			RuntimeDirs:  []string{te.bin},
			PollInterval: time.Millisecond,
			Clock:        &pollClock{},
			Accounts:     testAccounts,
			ReadFile: func(path string) (trust.File, error) {
				f, err := trust.Read(path, testAccounts)
				te.readsMu.Lock()
				if te.reads == nil {
					te.reads = map[string]int{}
				}
				te.reads[path]++
				te.readsMu.Unlock()
				if err == nil && !strings.HasPrefix(f.Path, te.paths.ConfigDir+"/") {
					// Whoever runs the tests: the files speak for te.speaker.
					f.Writers, f.Open = nil, ""
					if te.speaker != 0 {
						f.Writers = []int{te.speaker}
					}
				}
				return f, err
			},
		},
	})
}

// run runs bm2 with args and returns the exit code; output is in
// te.stdout and te.stderr (reset before each run).
func (te *testEnv) run(args ...string) int {
	te.t.Helper()
	te.stdout.Reset()
	te.stderr.Reset()
	return te.app().Main(context.Background(), args)
}

// mustRun runs and fails the test unless the exit code is want.
func (te *testEnv) mustRun(want int, args ...string) {
	te.t.Helper()
	if got := te.run(args...); got != want {
		te.t.Fatalf("bm2 %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), got, want, te.stdout.String(), te.stderr.String())
	}
}

// pollClock is a Clock whose time moves only when a wait polls: each tick
// it hands out is d later than the last, and a deadline passes once the
// ticks have added up to it. A --timeout of 30ms with a 1ms poll is thus
// 30 polls, on a quiet host or a loaded one.
type pollClock struct {
	mu        sync.Mutex
	now       time.Time
	deadlines []pollDeadline
}

type pollDeadline struct {
	at     time.Time
	cancel context.CancelFunc
}

func (c *pollClock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.deadlines = append(c.deadlines, pollDeadline{at: c.now.Add(d), cancel: cancel})
	c.mu.Unlock()
	return ctx, cancel
}

func (c *pollClock) Tick(d time.Duration) (<-chan time.Time, func()) {
	ch := make(chan time.Time)
	done := make(chan struct{})
	go func() {
		for {
			c.mu.Lock()
			c.now = c.now.Add(d)
			now := c.now
			keep := c.deadlines[:0]
			for _, dl := range c.deadlines {
				if now.Before(dl.at) {
					keep = append(keep, dl)
				} else {
					dl.cancel()
				}
			}
			c.deadlines = keep
			c.mu.Unlock()
			select {
			case ch <- now:
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return ch, func() { once.Do(func() { close(done) }) }
}
