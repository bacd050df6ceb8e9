package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// probe measures the probe's two verdicts: how long after an instance's
// listen() its reuseport_confirmed comes (project probeok, 4 instances
// started at once), and, for an app without reusePort (project probeex,
// 2 instances), how long from the first instance's start to
// reuseport_missing and from that to every instance stopped.
func (r *runner) probe(ctx context.Context) error {
	b := r.bm2
	const okN = 4
	okStopped := "{ test -f /etc/bm2/probeok.toml || (cd /srv/probeok && bm2 serve >/dev/null); } && " + probesDone + " && bm2 stop probeok >/dev/null"
	// serve the first time, then start (which clears the errored mark);
	// either fails, saying reuseport_missing: that is the point.
	exStart := "if test -f /etc/bm2/probeex.toml; then timeout 60 bm2 start probeex; else cd /srv/probeex && timeout 60 bm2 serve; fi >/dev/null 2>&1; true"
	exStopped := `for i in 0 1; do s=$(systemctl show -P ActiveState bm2@probeex-$i.service); test "$s" = inactive -o "$s" = failed || exit 1; done`
	r.record("probe", okStopped+"   # before (not timed)", "bm2 start probeok",
		"journalctl -o json --since @T0 -u 'bm2@probeok-*'   # each instance's \"listening on … at_ms=\" line",
		"journalctl -o json --since @T0 -t bm2 BM2_EVENT=reuseport_confirmed BM2_PROJECT=probeok   # each instance's first event after T0",
		exStart, "until "+exStopped+"; do sleep 0.1; done   # and a reuseport_missing event after T0",
		"systemctl show -P ActiveEnterTimestampMonotonic,InactiveEnterTimestampMonotonic bm2@probeex-0.service bm2@probeex-1.service",
		"journalctl -o json --since @T0 -t bm2 BM2_EVENT=reuseport_missing BM2_PROJECT=probeex   # its __MONOTONIC_TIMESTAMP")
	for rep := range r.s.ProbeReps {
		// Confirmed.
		if out, err := b.sh(ctx, okStopped); err != nil {
			return fmt.Errorf("probeok: %w\n%s", err, out)
		}
		t0, err := r.sandboxNowUs(ctx)
		if err != nil {
			return err
		}
		if out, err := b.sh(ctx, "bm2 start probeok >/dev/null"); err != nil {
			return fmt.Errorf("bm2 start probeok: %w\n%s", err, out)
		}
		var lags []float64
		deadline := time.Now().Add(10 * time.Second)
		for {
			// The apps' lines may reach the journal a moment after bm2
			// start returned.
			lags, err = r.confirmLags(ctx, "probeok", okN, t0)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			return err
		}
		for i, l := range lags {
			r.sample("probe", fmt.Sprintf("confirmed: %d instances started at once, each", okN), "listen() → reuseport_confirmed (ms)", rep*okN+i, l)
		}
		_, med := minMed(lags)
		r.logf("probe %d/%d confirmed: listen() → reuseport_confirmed %v ms (median %.0f)", rep+1, r.s.ProbeReps, lags, med)

		// Exclusive.
		t0, err = r.sandboxNowUs(ctx)
		if err != nil {
			return err
		}
		if out, err := b.sh(ctx, exStart); err != nil {
			return fmt.Errorf("probeex: %w\n%s", err, out)
		}
		var verdict int64
		if err := b.until(ctx, 30*time.Second, "probeex stopped for reuseport_missing", exStopped); err != nil {
			return err
		}
		for deadline := time.Now().Add(10 * time.Second); verdict == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			verdict = r.eventMonotonic(ctx, "reuseport_missing", "probeex", t0)
		}
		if verdict == 0 {
			return fmt.Errorf("probeex: no reuseport_missing event after its start")
		}
		first, last, err := r.startStop(ctx, "probeex", 2)
		if err != nil {
			return err
		}
		if first == 0 || last == 0 || first > verdict || last < verdict {
			r.note("probe", fmt.Sprintf("Repetition %d of the exclusive case is not counted: its timestamps do not bracket the verdict "+
				"(first start %d, verdict %d, last stop %d, µs of CLOCK_MONOTONIC).", rep+1, first, verdict, last))
			continue
		}
		v := "exclusive: 2 instances without reusePort"
		r.sample("probe", v, "first start → reuseport_missing (ms)", rep, float64(verdict-first)/1000)
		r.sample("probe", v, "reuseport_missing → every instance stopped (ms)", rep, float64(last-verdict)/1000)
		r.logf("probe %d/%d exclusive: start → reuseport_missing %.0f ms, → every instance stopped %.0f ms",
			rep+1, r.s.ProbeReps, float64(verdict-first)/1000, float64(last-verdict)/1000)
	}
	r.bm2.sh(ctx, "bm2 delete probeok >/dev/null; bm2 delete probeex >/dev/null")
	return nil
}

// sandboxNowUs is the bm2 sandbox's wall clock in µs since the epoch.
func (r *runner) sandboxNowUs(ctx context.Context) (int64, error) {
	out, err := r.bm2.sh(ctx, "date +%s%6N")
	if err != nil {
		return 0, fmt.Errorf("date: %w\n%s", err, out)
	}
	return strconv.ParseInt(strings.TrimSpace(out), 10, 64)
}

// journalJSON reads the bm2 sandbox's journal since t0 (µs since the
// epoch) with the given matches, one map per entry.
func (r *runner) journalJSON(ctx context.Context, t0 int64, args ...string) []map[string]any {
	full := append([]string{"journalctl", "--no-pager", "-o", "json", "--since", fmt.Sprintf("@%d", t0/1_000_000)}, args...)
	out, _, err := r.bm2.Exec(ctx, full...)
	if err != nil {
		return nil
	}
	var es []map[string]any
	for _, l := range strings.Split(out, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) == nil {
			es = append(es, e)
		}
	}
	return es
}

func field(e map[string]any, k string) string { s, _ := e[k].(string); return s }

func fieldInt(e map[string]any, k string) int64 {
	n, _ := strconv.ParseInt(field(e, k), 10, 64)
	return n
}

var atMs = regexp.MustCompile(`listening on .* at_ms=(\d+)`)

// confirmLags is, for each of the n instances of project started after
// t0, the ms from its app's listen() (the at_ms of its "listening" line)
// to its first reuseport_confirmed.
func (r *runner) confirmLags(ctx context.Context, project string, n int, t0 int64) ([]float64, error) {
	listened := listenTimes(r.journalJSON(ctx, t0, "-u", "bm2@"+project+"-*"), t0)
	confirmed := eventTimes(r.journalJSON(ctx, t0, "-t", "bm2", "BM2_EVENT=reuseport_confirmed", "BM2_PROJECT="+project), t0)
	var lags []float64
	for i := range n {
		inst := fmt.Sprintf("%s-%d", project, i)
		l, ok1 := listened["bm2@"+inst+".service"]
		c, ok2 := confirmed[inst]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%s: listened %v (at_ms), confirmed %v (µs): not both after the start", inst, listened, confirmed)
		}
		lags = append(lags, float64(c)/1000-float64(l))
	}
	return lags, nil
}

// listenTimes is each unit's last "listening … at_ms=" (ms since the
// epoch) not before t0 (µs).
func listenTimes(es []map[string]any, t0 int64) map[string]int64 {
	out := map[string]int64{}
	for _, e := range es {
		m := atMs.FindStringSubmatch(field(e, "MESSAGE"))
		if m == nil {
			continue
		}
		at, _ := strconv.ParseInt(m[1], 10, 64)
		if unit := field(e, "_SYSTEMD_UNIT"); unit != "" && at*1000 >= t0 {
			out[unit] = max(out[unit], at)
		}
	}
	return out
}

// eventTimes is each instance's first event (journal wall clock, µs) not
// before t0.
func eventTimes(es []map[string]any, t0 int64) map[string]int64 {
	out := map[string]int64{}
	for _, e := range es {
		inst, ts := field(e, "BM2_INSTANCE"), fieldInt(e, "__REALTIME_TIMESTAMP")
		if inst == "" || ts < t0 {
			continue
		}
		if old, ok := out[inst]; !ok || ts < old {
			out[inst] = ts
		}
	}
	return out
}

// eventMonotonic is the CLOCK_MONOTONIC µs of the first event of kind for
// project after t0 (wall clock, µs); 0 if there is none.
func (r *runner) eventMonotonic(ctx context.Context, kind, project string, t0 int64) int64 {
	var first int64
	for _, e := range r.journalJSON(ctx, t0, "-t", "bm2", "BM2_EVENT="+kind, "BM2_PROJECT="+project) {
		if fieldInt(e, "__REALTIME_TIMESTAMP") < t0 {
			continue
		}
		if m := fieldInt(e, "__MONOTONIC_TIMESTAMP"); first == 0 || m < first {
			first = m
		}
	}
	return first
}

// startStop is the first ActiveEnterTimestampMonotonic and the last
// InactiveEnterTimestampMonotonic of the project's first n instances (0
// for a unit systemd no longer has).
func (r *runner) startStop(ctx context.Context, project string, n int) (first, last int64, err error) {
	for i := range n {
		unit := fmt.Sprintf("bm2@%s-%d.service", project, i)
		out, err := r.bm2.sh(ctx, "systemctl show -P ActiveEnterTimestampMonotonic "+unit+" && systemctl show -P InactiveEnterTimestampMonotonic "+unit)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w\n%s", unit, err, out)
		}
		f := strings.Fields(out)
		if len(f) != 2 {
			return 0, 0, fmt.Errorf("%s: %q", unit, out)
		}
		start, _ := strconv.ParseInt(f[0], 10, 64)
		stop, _ := strconv.ParseInt(f[1], 10, 64)
		if start > 0 && (first == 0 || start < first) {
			first = start
		}
		last = max(last, stop)
	}
	return first, last, nil
}
