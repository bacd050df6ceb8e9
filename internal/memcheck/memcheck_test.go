package memcheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/journaltest"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/sysdtest"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

var hstart = time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)

// running is instance i of api, up since hstart, as uid 1500.
func running(i int, invocation string) sysd.Status {
	return sysd.Status{Name: units.Instance("api", i), LoadState: "loaded", ActiveState: "active", SubState: "running",
		InvocationID: invocation, ActiveEnter: hstart, UID: 1500, GID: 1500,
		Environment: []string{"BM2_APP_PORT=3000"}}
}

// newWorld is project api with n instances running, its target wanting
// them (and a probe).
func newWorld(n int) *sysdtest.Systemd {
	w := sysdtest.New()
	var wants []string
	for i := 0; i < n; i++ {
		wants = append(wants, units.Instance("api", i))
		w.ByName[units.Instance("api", i)] = running(i, fmt.Sprintf("inv%d", i))
	}
	w.ByName[units.Target("api")] = sysd.Status{Name: units.Target("api"), LoadState: "loaded", ActiveState: "active", Wants: append(wants, "bm2-probe@api-0.service")}
	return w
}

// memoryWorld is systemd as the memory check sees it: the world's
// units, each instance's memory at the first and the second reading, and
// the starts asked for.
type memoryWorld struct {
	*sysdtest.Systemd
	first, second map[int]uint64 // by index; none: sysd.Unknown
	reads         int            // Units calls
}

func (w *memoryWorld) Units(ctx context.Context, names []string) ([]sysd.Status, error) {
	w.reads++
	out, _ := w.Systemd.Units(ctx, names)
	for k := range out {
		_, i, _ := units.ParseInstance(names[k])
		m, ok := w.first[i]
		if w.reads > 1 {
			m, ok = w.second[i]
		}
		out[k].MemoryCurrent = sysd.Unknown
		if ok {
			out[k].MemoryCurrent = m
		}
	}
	return out, nil
}

type memoryRig struct {
	w      *memoryWorld
	c      *Checker
	events *journaltest.Recorder
	log    *bytes.Buffer
	dir    string
	slept  []time.Duration
	now    time.Time
}

const mib = 1 << 20

func newMemoryRig(t *testing.T, n int) *memoryRig {
	hw := newWorld(n)
	hw.ByName[units.MemoryService("api")] = sysd.Status{Name: units.MemoryService("api"), LoadState: "loaded",
		Environment: []string{fmt.Sprintf("BM2_MEMORY_RESTART=%d", 300*mib)}}
	r := &memoryRig{w: &memoryWorld{Systemd: hw, first: map[int]uint64{}, second: map[int]uint64{}},
		events: &journaltest.Recorder{}, log: &bytes.Buffer{}, dir: t.TempDir(), now: hstart.Add(time.Minute)}
	for i := 0; i < n; i++ {
		r.w.first[i], r.w.second[i] = 80*mib, 80*mib
	}
	r.c = &Checker{Project: "api", Systemd: r.w, Events: r.events,
		Crashes: crashlog.Logs{Dir: filepath.Join(r.dir, "log")}, Now: func() time.Time { return r.now },
		Dir:   filepath.Join(r.dir, "memory", "api"),
		Sleep: func(ctx context.Context, d time.Duration) error { r.slept = append(r.slept, d); return nil },
		Log:   func(f string, a ...any) { fmt.Fprintf(r.log, f+"\n", a...) }}
	return r
}

func (r *memoryRig) run(t *testing.T) {
	t.Helper()
	r.w.reads = 0
	if err := r.c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// An instance above memory_restart at a check and again a second later
// is reloaded alone: memory_restart with the figure, a crash.log line,
// the start of its reload unit; its neighbours are left alone.
func TestMemoryRestartsTheInstanceAbove(t *testing.T) {
	r := newMemoryRig(t, 3)
	r.w.first[1], r.w.second[1] = 310*mib, 320*mib
	r.run(t)
	if len(r.w.Started) != 1 || r.w.Started[0] != "bm2-api-reload@1.service" {
		t.Fatalf("started %v, want bm2-api-reload@1.service alone", r.w.Started)
	}
	if len(r.slept) != 1 || r.slept[0] != time.Second {
		t.Errorf("waited %v between the readings, want 1s", r.slept)
	}
	if len(r.events.Got) != 1 {
		t.Fatalf("events %v", r.events.Got)
	}
	ev := r.events.Got[0]
	if ev.Kind != journal.MemoryRestart || ev.Instance != "api-1" || ev.Invocation != "inv1" || ev.Reason != reason.MemoryRestart ||
		ev.Memory != 320*mib || ev.MemoryLimit != 300*mib ||
		!strings.Contains(ev.Message, "api-1 uses 320.0 MiB, above memory_restart (300.0 MiB) at two readings 1s apart (310.0 MiB first); reloading it") {
		t.Errorf("event %+v", ev)
	}
	f := journal.Fields(ev)
	if f["BM2_MEMORY"] != "335544320" || f["BM2_MEMORY_RESTART"] != "314572800" {
		t.Errorf("fields %v", f)
	}
	lines := crashlog.Logs{Dir: filepath.Join(r.dir, "log")}.LastLines("api", "api-1", 5)
	if len(lines) != 1 || !strings.Contains(lines[0], " reason=memory_restart ") {
		t.Errorf("crash.log: %q", lines)
	}
}

// What is not acted on: a peak given back by the second reading, a run
// that ended between the readings (another InvocationID), memory systemd
// does not know, an instance at the limit, one whose reload is under way,
// and a project all below.
func TestMemoryLeavesAlone(t *testing.T) {
	for name, set := range map[string]func(r *memoryRig){
		"peak":    func(r *memoryRig) { r.w.first[0], r.w.second[0] = 400*mib, 200*mib },
		"unknown": func(r *memoryRig) { delete(r.w.first, 0); delete(r.w.second, 0) },
		"at the limit": func(r *memoryRig) {
			r.w.first[0], r.w.second[0] = 300*mib, 300*mib
		},
		"new run": func(r *memoryRig) {
			r.w.first[0], r.w.second[0] = 400*mib, 400*mib
			r.w.OnUnit = func(name string, st sysd.Status) sysd.Status {
				if name == units.Instance("api", 0) && r.w.reads > 1 {
					st.InvocationID = "other"
				}
				return st
			}
		},
		"reload under way": func(r *memoryRig) {
			r.w.first[0], r.w.second[0] = 400*mib, 400*mib
			r.w.ByName[units.ReloadInstance("api", 0)] = sysd.Status{Name: units.ReloadInstance("api", 0), LoadState: "loaded", ActiveState: "activating"}
		},
		"stopped": func(r *memoryRig) {
			r.w.first[0], r.w.second[0] = 400*mib, 400*mib
			st := r.w.ByName[units.Instance("api", 0)]
			st.ActiveState, st.SubState = "inactive", "dead"
			r.w.ByName[units.Instance("api", 0)] = st
		},
		"below": func(r *memoryRig) {},
	} {
		t.Run(name, func(t *testing.T) {
			r := newMemoryRig(t, 2)
			set(r)
			r.run(t)
			if len(r.w.Started) != 0 || len(r.events.Got) != 0 {
				t.Errorf("started %v, events %v", r.w.Started, r.events.Got)
			}
			if name == "below" && len(r.slept) != 0 {
				t.Errorf("waited %v with every instance below the limit", r.slept)
			}
		})
	}
}

// The limit comes from the service's own Environment=: without it (a unit
// not bm2-generator's) the run fails and reads no instance.
func TestMemoryNeedsItsLimit(t *testing.T) {
	for _, env := range []string{"", "BM2_MEMORY_RESTART=abc", "BM2_MEMORY_RESTART=1024", "BM2_MEMORY_RESTART=0314572800"} {
		r := newMemoryRig(t, 1)
		r.w.ByName[units.MemoryService("api")] = sysd.Status{Name: units.MemoryService("api"), LoadState: "loaded", Environment: []string{env}}
		r.w.first[0] = 400 * mib
		if err := r.c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "has no BM2_MEMORY_RESTART") {
			t.Errorf("%q: %v", env, err)
		}
		if r.w.reads != 0 || len(r.w.Started) != 0 {
			t.Errorf("%q: read %d times, started %v", env, r.w.reads, r.w.Started)
		}
	}
}

// The surge (a reload's) is never checked: no target wants it.
func TestMemoryChecksOnlyWhatTheTargetWants(t *testing.T) {
	r := newMemoryRig(t, 1)
	surge := running(units.Surge, "invs")
	r.w.ByName[units.Instance("api", units.Surge)] = surge
	tg := r.w.ByName[units.Target("api")]
	tg.Wants = append(tg.Wants, units.Instance("api", units.Surge))
	r.w.ByName[units.Target("api")] = tg
	r.w.first[units.Surge], r.w.second[units.Surge] = 400*mib, 400*mib
	r.run(t)
	if len(r.w.Started) != 0 {
		t.Errorf("started %v", r.w.Started)
	}
}

// A run is left alone for config.MemoryGrace after its start.
func TestMemoryGrace(t *testing.T) {
	r := newMemoryRig(t, 1)
	r.w.first[0], r.w.second[0] = 400*mib, 400*mib
	r.now = hstart.Add(9 * time.Second)
	r.run(t)
	if len(r.w.Started) != 0 || len(r.slept) != 0 {
		t.Fatalf("a run of 9 s: started %v", r.w.Started)
	}
	r.now = hstart.Add(10 * time.Second)
	r.run(t)
	if len(r.w.Started) != 1 {
		t.Fatalf("a run of 10 s: started %v", r.w.Started)
	}
}

// Several instances above the limit: one reload at a time, the largest
// first; none while a memory reload of the project is under way.
func TestMemoryOneReloadAtATime(t *testing.T) {
	r := newMemoryRig(t, 3)
	r.w.first[0], r.w.second[0] = 310*mib, 310*mib
	r.w.first[2], r.w.second[2] = 330*mib, 340*mib
	r.run(t)
	if len(r.w.Started) != 1 || r.w.Started[0] != "bm2-api-reload@2.service" || len(r.events.Got) != 1 {
		t.Fatalf("started %v, events %v: want api-2's reload alone, the largest", r.w.Started, r.events.Got)
	}
	if !strings.Contains(r.log.String(), "api-0: 310.0 MiB, above memory_restart: reloaded after api-2, at a later check") {
		t.Errorf("log:\n%s", r.log)
	}
	r.w.ByName[units.ReloadInstance("api", 2)] = sysd.Status{Name: units.ReloadInstance("api", 2), LoadState: "loaded", ActiveState: "activating"}
	r.run(t)
	if len(r.w.Started) != 1 {
		t.Fatalf("started %v while a reload is under way", r.w.Started)
	}
}

// A reload that failed (the lock held) is started again at the next check
// without a second event or crash.log line; a new run is reported anew.
func TestMemoryReportsARunOnce(t *testing.T) {
	r := newMemoryRig(t, 1)
	r.w.first[0], r.w.second[0] = 400*mib, 400*mib
	inv := "0123456789abcdef0123456789abcdef"
	st := r.w.ByName[units.Instance("api", 0)]
	st.InvocationID = inv
	r.w.ByName[units.Instance("api", 0)] = st
	r.run(t)
	r.w.ByName[units.ReloadInstance("api", 0)] = sysd.Status{Name: units.ReloadInstance("api", 0), LoadState: "loaded", ActiveState: "failed"}
	r.run(t)
	if len(r.w.Started) != 2 || len(r.events.Got) != 1 {
		t.Fatalf("started %v, %d events: want the reload started twice, one event", r.w.Started, len(r.events.Got))
	}
	if data, err := os.ReadFile(filepath.Join(r.dir, "memory", "api", "reported")); err != nil || string(data) != "api-0 "+inv+"\n" {
		t.Errorf("reported: %q %v", data, err)
	}
	lines := crashlog.Logs{Dir: filepath.Join(r.dir, "log")}.LastLines("api", "api-0", 5)
	if len(lines) != 1 {
		t.Errorf("crash.log: %q", lines)
	}
	st.InvocationID = "fedcba9876543210fedcba9876543210"
	r.w.ByName[units.Instance("api", 0)] = st
	r.run(t)
	if len(r.events.Got) != 2 {
		t.Errorf("a new run above the limit: %d events", len(r.events.Got))
	}
}

// The working set leaves the inactive page cache out, on cgroup v1 and
// v2; without memory.stat it is the memory systemd reports.
func TestWorkingSet(t *testing.T) {
	root := t.TempDir()
	cg := "/bm2.slice/bm2-api.slice/bm2@api-0.service"
	if got := WorkingSet(root, cg, 500*mib); got != 500*mib {
		t.Errorf("no memory.stat: %d", got)
	}
	v2 := filepath.Join(root, cg)
	if err := os.MkdirAll(v2, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v2, "memory.stat"), []byte(fmt.Sprintf("anon 1000\nfile 2000\ninactive_file %d\nactive_file 5\n", 200*mib)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := WorkingSet(root, cg, 500*mib); got != 300*mib {
		t.Errorf("v2: %d, want 300 MiB", got)
	}
	v1 := filepath.Join(root, "memory", cg)
	if err := os.MkdirAll(v1, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v1, "memory.stat"), []byte(fmt.Sprintf("inactive_file 1\ntotal_inactive_file %d\n", 100*mib)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := WorkingSet(root, cg, 500*mib); got != 400*mib {
		t.Errorf("v1: %d, want 400 MiB (total_inactive_file)", got)
	}
	if got := WorkingSet(root, "/../etc", 500*mib); got != 500*mib {
		t.Errorf("a cgroup path with ..: %d", got)
	}
	if got := WorkingSet(root, cg, 50*mib); got != 0 {
		t.Errorf("cache above the current: %d", got)
	}
}
