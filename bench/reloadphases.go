package main

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The phases of one instance's step in a bm2 reload, each ending at a
// journal line (see reloadPhases).
var reloadPhaseNames = []string{
	"stop job → drained (ExecStop= spawned, drain)",
	"of which the drain's own wait (its line)",
	"drained → stopped (SIGTERM, exit, exit hook)",
	"stopped → starting",
	"starting → started (port fence, sandbox, exec)",
	"started → listening (runtime start)",
	"listening → confirmed (probe)",
	"confirmed → next stop job (CLI)",
	"step total",
}

// journalLine is one line of `journalctl -o short-unix`.
type journalLine struct {
	t     float64 // seconds
	ident string
	msg   string
}

var shortUnix = regexp.MustCompile(`^(\d+\.\d+) \S+ ([^\[:]+)(?:\[\d+\])?: (.*)$`)

func parseShortUnix(out string) []journalLine {
	var ls []journalLine
	for _, l := range strings.Split(out, "\n") {
		m := shortUnix.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		t, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		ls = append(ls, journalLine{t: t, ident: m[2], msg: m[3]})
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].t < ls[j].t })
	return ls
}

// reloadPhases breaks a bm2 reload of project name down, per instance
// step, from the journal of the reload (`journalctl -o short-unix` of
// bm2@name-*.service and bm2-probe@name-*.service): systemd's "Stopping",
// the drain's "drained in", systemd's "Stopped", "Starting" and "Started",
// the app's "listening" line (its own clock, at_ms: the journal's stream
// adds latency), the probe's reuseport_confirmed, and the next step's
// "Stopping" (the last step's: the surge's, which the CLI queues when it
// is done). Each step is a map from reloadPhaseNames to milliseconds; a
// phase whose lines are missing is left out.
func reloadPhases(out, name string) []map[string]float64 {
	ls := parseShortUnix(out)
	var order []string
	first := func(from float64, match func(journalLine) bool) (float64, bool) {
		for _, l := range ls {
			if l.t >= from && match(l) {
				return l.t, true
			}
		}
		return 0, false
	}
	sys := func(verb, id string) func(journalLine) bool {
		prefix := verb + " bm2@" + id + ".service"
		return func(l journalLine) bool { return l.ident == "systemd" && strings.HasPrefix(l.msg, prefix) }
	}
	for _, l := range ls {
		if l.ident != "systemd" || !strings.HasPrefix(l.msg, "Stopping bm2@"+name+"-") {
			continue
		}
		id := strings.TrimPrefix(l.msg, "Stopping bm2@")
		id, _, _ = strings.Cut(id, ".service")
		if id != name+"-surge" && !contains(order, id) {
			order = append(order, id)
		}
	}
	var steps []map[string]float64
	for k, id := range order {
		ph := map[string]float64{}
		set := func(phase int, from, to float64, ok bool) {
			if ok && to >= from {
				ph[reloadPhaseNames[phase]] = (to - from) * 1000
			}
		}
		stop, ok := first(0, sys("Stopping", id))
		if !ok {
			continue
		}
		var waited time.Duration
		drained, okD := first(stop, func(l journalLine) bool {
			rest, ok := strings.CutPrefix(l.msg, id+" drained in ")
			if ok && l.ident == id {
				waited, _ = time.ParseDuration(rest)
			}
			return ok && l.ident == id
		})
		stopped, okS := first(stop, sys("Stopped", id))
		starting, okG := first(stopped, sys("Starting", id))
		started, okT := first(starting, sys("Started", id))
		var listen float64
		okL := false
		for _, l := range ls {
			if l.t >= started && l.ident == id {
				if m := atMs.FindStringSubmatch(l.msg); m != nil {
					ms, _ := strconv.ParseFloat(m[1], 64)
					listen, okL = ms/1000, true
					break
				}
			}
		}
		conf, okC := first(started, func(l journalLine) bool {
			return strings.HasPrefix(l.msg, id+": port ") && strings.Contains(l.msg, "is shared with SO_REUSEPORT")
		})
		nextID := name + "-surge"
		if k+1 < len(order) {
			nextID = order[k+1]
		}
		next, okN := first(conf, sys("Stopping", nextID))
		set(0, stop, drained, okD)
		if okD && waited > 0 {
			ph[reloadPhaseNames[1]] = float64(waited) / float64(time.Millisecond)
		}
		set(2, drained, stopped, okD && okS)
		set(3, stopped, starting, okS && okG)
		set(4, starting, started, okG && okT)
		set(5, started, listen, okT && okL)
		set(6, listen, conf, okL && okC)
		set(7, conf, next, okC && okN)
		set(8, stop, next, okC && okN)
		steps = append(steps, ph)
	}
	return steps
}

// recordReloadPhases reads the journal of the bm2 reload that began at
// since (seconds, the sandbox's clock) and records its steps as samples of
// the reloadphases figure, variant by load.
func (r *runner) recordReloadPhases(ctx context.Context, c reloadCase, mode string, rep int, since string) error {
	out, err := r.bm2.sh(ctx, fmt.Sprintf("journalctl -q -o short-unix --since=@%s -u 'bm2@%s-*' -u 'bm2-probe@%s-*'", since, c.name, c.name))
	if err != nil {
		return fmt.Errorf("the reload's journal: %w\n%s", err, out)
	}
	steps := reloadPhases(out, c.name)
	if len(steps) != c.instances {
		r.logf("%s: %d of %d reload steps found in the journal", c.name, len(steps), c.instances)
	}
	variant := fmt.Sprintf("bm2, %s, per instance (%d instances)", mode, c.instances)
	for _, st := range steps {
		for _, p := range reloadPhaseNames {
			if v, ok := st[p]; ok {
				r.sample("reloadphases", variant, p, rep, v)
			}
		}
	}
	return nil
}
