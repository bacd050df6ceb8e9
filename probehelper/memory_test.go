package probehelper

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// memoryWorld is systemd as the memory check sees it: healthWorld's
// units, each instance's memory at the first and the second reading, and
// the starts asked for.
type memoryWorld struct {
	*healthWorld
	first, second map[int]uint64 // by index; none: sysd.Unknown
	reads         int            // Units calls
	started       []string
}

func (w *memoryWorld) Units(ctx context.Context, names []string) ([]sysd.Status, error) {
	w.reads++
	out, _ := w.healthWorld.Units(ctx, names)
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

func (w *memoryWorld) Trigger(ctx context.Context, unit string) error {
	w.started = append(w.started, unit)
	return nil
}

type memoryRig struct {
	w      *memoryWorld
	c      *MemoryChecker
	events *events
	log    *bytes.Buffer
	dir    string
	slept  []time.Duration
}

const mib = 1 << 20

func newMemoryRig(t *testing.T, n int) *memoryRig {
	hw := newHealthWorld(n)
	hw.units[units.MemoryService("api")] = sysd.Status{Name: units.MemoryService("api"), LoadState: "loaded",
		Environment: []string{fmt.Sprintf("BM2_MEMORY_RESTART=%d", 300*mib)}}
	r := &memoryRig{w: &memoryWorld{healthWorld: hw, first: map[int]uint64{}, second: map[int]uint64{}},
		events: &events{}, log: &bytes.Buffer{}, dir: t.TempDir()}
	for i := 0; i < n; i++ {
		r.w.first[i], r.w.second[i] = 80*mib, 80*mib
	}
	r.c = &MemoryChecker{Project: "api", Systemd: r.w, Events: r.events,
		Crashes: crashlog.Logs{Dir: filepath.Join(r.dir, "log")}, Now: func() time.Time { return hstart },
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
	if len(r.w.started) != 1 || r.w.started[0] != "bm2-api-reload@1.service" {
		t.Fatalf("started %v, want bm2-api-reload@1.service alone", r.w.started)
	}
	if len(r.slept) != 1 || r.slept[0] != time.Second {
		t.Errorf("waited %v between the readings, want 1s", r.slept)
	}
	if len(r.events.got) != 1 {
		t.Fatalf("events %v", r.events.got)
	}
	ev := r.events.got[0]
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
			r.w.onUnit = func(name string, st sysd.Status) sysd.Status {
				if name == units.Instance("api", 0) && r.w.reads > 1 {
					st.InvocationID = "other"
				}
				return st
			}
		},
		"reload under way": func(r *memoryRig) {
			r.w.first[0], r.w.second[0] = 400*mib, 400*mib
			r.w.units[units.ReloadInstance("api", 0)] = sysd.Status{Name: units.ReloadInstance("api", 0), LoadState: "loaded", ActiveState: "activating"}
		},
		"stopped": func(r *memoryRig) {
			r.w.first[0], r.w.second[0] = 400*mib, 400*mib
			st := r.w.units[units.Instance("api", 0)]
			st.ActiveState, st.SubState = "inactive", "dead"
			r.w.units[units.Instance("api", 0)] = st
		},
		"below": func(r *memoryRig) {},
	} {
		t.Run(name, func(t *testing.T) {
			r := newMemoryRig(t, 2)
			set(r)
			r.run(t)
			if len(r.w.started) != 0 || len(r.events.got) != 0 {
				t.Errorf("started %v, events %v", r.w.started, r.events.got)
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
		r.w.units[units.MemoryService("api")] = sysd.Status{Name: units.MemoryService("api"), LoadState: "loaded", Environment: []string{env}}
		r.w.first[0] = 400 * mib
		if err := r.c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "has no BM2_MEMORY_RESTART") {
			t.Errorf("%q: %v", env, err)
		}
		if r.w.reads != 0 || len(r.w.started) != 0 {
			t.Errorf("%q: read %d times, started %v", env, r.w.reads, r.w.started)
		}
	}
}

// The surge (a reload's) is never checked: no target wants it.
func TestMemoryChecksOnlyWhatTheTargetWants(t *testing.T) {
	r := newMemoryRig(t, 1)
	surge := running(units.Surge, "invs")
	r.w.units[units.Instance("api", units.Surge)] = surge
	r.w.first[units.Surge], r.w.second[units.Surge] = 400*mib, 400*mib
	r.run(t)
	if len(r.w.started) != 0 {
		t.Errorf("started %v", r.w.started)
	}
}
