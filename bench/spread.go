package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Spread figure metrics and the number of connections it opens.
const (
	spreadConns  = 64
	spreadBusier = "connections on the busier instance (of 64)"
	spreadGap    = "busier − other"
)

// spreadSteered waits until bm2 status says the port of the throughput
// figure's Node.js project is kernel-steered over both instances.
const spreadSteered = `(for i in $(seq 300); do bm2 status tput-node | grep -q 'round-robin over 2' && exit 0; sleep 0.1; done; bm2 status tput-node; exit 1)`

// spread: how 64 keep-alive connections, opened at once as wrk opens
// them, split over 2 instances: bm2's cluster mode with its kernel-steered
// port, PM2's node:cluster primary (round-robin in the God daemon), and
// the same 2 reusePort processes bare (the kernel's hash of each
// connection, which is also bm2's fallback where BPF is unavailable).
// Each repetition starts every contender afresh, in rotating order.
func (r *runner) spread(ctx context.Context) error {
	var systems []tputSystem
	for _, sys := range r.tputSystems() {
		switch sys.name {
		case "bm2 + Node.js":
			sys.start += " && " + spreadSteered
			systems = append(systems, sys)
		case "PM2 + Node.js", TputBare:
			systems = append(systems, sys)
		}
	}
	for _, sys := range systems {
		port := strings.TrimSuffix(strings.TrimPrefix(sys.url, "http://127.0.0.1:"), "/")
		r.record("spread", sys.start, "bench-helper "+helperArg+" spread -addr 127.0.0.1:"+port+" -n "+strconv.Itoa(spreadConns), sys.stop)
	}
	reps := r.s.StartReps
	for rep := range reps {
		for k := range systems {
			sys := systems[(k+rep)%len(systems)]
			if out, err := sys.bed.sh(ctx, sys.start); err != nil {
				return fmt.Errorf("spread: start %s: %w\n%s", sys.name, err, out)
			}
			// Settled: both instances listen (a fresh one may not yet).
			// A spread that reached one process is taken again, up to 5
			// times, half a second apart: the other may still start.
			addr := strings.TrimSuffix(strings.TrimPrefix(sys.url, "http://"), "/")
			var res SpreadResult
			for try := 0; try < 5 && len(res.PIDs) != 2; try++ {
				time.Sleep(500 * time.Millisecond)
				res = SpreadResult{}
				if err := sys.bed.helper(ctx, "", &res, "spread", "-addr", addr, "-n", strconv.Itoa(spreadConns)); err != nil {
					return fmt.Errorf("spread %s: %w", sys.name, err)
				}
			}
			if out, err := sys.bed.sh(ctx, sys.stop); err != nil {
				return fmt.Errorf("spread: stop %s: %w\n%s", sys.name, err, out)
			}
			busier, other, err := spreadSplit(res.PIDs, spreadConns)
			if err != nil {
				return fmt.Errorf("spread %s: %w", sys.name, err)
			}
			r.sample("spread", sys.name, spreadBusier, rep, float64(busier))
			r.sample("spread", sys.name, spreadGap, rep, float64(busier-other))
			r.logf("spread %d/%d %-50s %d/%d", rep+1, reps, sys.name, busier, other)
		}
	}
	return nil
}

// spreadSplit is the busier and the other instance's connections of a
// spread over 2 instances that answered all n.
func spreadSplit(pids map[int]int, n int) (busier, other int, err error) {
	var counts []int
	total := 0
	for _, c := range pids {
		counts = append(counts, c)
		total += c
	}
	if total != n || len(counts) > 2 {
		return 0, 0, fmt.Errorf("%d connections over %d processes (%v), want %d over 2", total, len(counts), pids, n)
	}
	slices.Sort(counts)
	if len(counts) == 1 {
		return counts[0], 0, nil
	}
	return counts[1], counts[0], nil
}

// spreadHead adds the spread figure's headline row: the busier
// instance's share, bm2 beside PM2 and the kernel's hash.
func (rp *report) spreadHead() {
	share := func(variant string) (string, bool) {
		var xs []float64
		for _, s := range rp.res.Samples {
			if s.Figure == "spread" && s.Variant == variant && s.Metric == spreadBusier {
				xs = append(xs, s.Value)
			}
		}
		if len(xs) == 0 {
			return "—", false
		}
		_, med := minMed(xs)
		hi := maxOf(xs)
		return fmt.Sprintf("%s/%s (worst %s/%s, %s)", fnum(med, 0), fnum(spreadConns-med, 0), fnum(hi, 0), fnum(spreadConns-hi, 0), runsText(len(xs))), true
	}
	bm, ok := share("bm2 + Node.js")
	if !ok {
		return
	}
	pm, _ := share("PM2 + Node.js")
	hash, _ := share(TputBare)
	rp.head = append(rp.head, []string{"spread of 64 keep-alive connections over 2 instances (median split)",
		bm + " (kernel-steered)", pm, "kernel hash alone (2 bare reusePort processes, bm2's fallback): " + hash, "32/32 ± 1"})
}
