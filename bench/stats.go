package main

import (
	"math"
	"sort"
	"time"
)

// Results is everything a run measured; bench/results.json holds it as is.
type Results struct {
	Settings   settings      `json:"settings"`
	Started    time.Time     `json:"started"`
	Finished   time.Time     `json:"finished"`
	Machine    []kv          `json:"machine"`
	Versions   []kv          `json:"versions"`
	Binaries   []kv          `json:"binaries_sha256_prefix"`
	Sysctls    []string      `json:"sysctls"`
	Throughput []TputRun     `json:"throughput,omitempty"`
	Start      []StartRun    `json:"start,omitempty"`
	Crash      []CrashRun    `json:"crash,omitempty"`
	Reload     ReloadResults `json:"reload"`
	Reload1    ReloadResults `json:"reload_1_instance"`
	Reload4    ReloadResults `json:"reload_4_instances"`
	// The reload of 2 instances with Bun (bm2 only).
	ReloadBun ReloadResults `json:"reload_bun"`
	// Fork-mode reload behind nginx, configured by bm2 gateway; the same
	// with nginx's default max_fails; cluster mode behind nginx.
	GatewayReload  ReloadResults `json:"gateway_reload"`
	GatewayDefault ReloadResults `json:"gateway_reload_nginx_defaults"`
	GatewayCluster ReloadResults `json:"gateway_reload_cluster"`
	Generator      []GenRun      `json:"generator,omitempty"`
	// systemctl daemon-reload with N projects: bm2's generator vs the same
	// units written by hand.
	DaemonReload DaemonReloadResults `json:"daemon_reload"`
	// The figures without a result type of their own (see sampleFigures),
	// and remarks on any figure (such as why it was not measured).
	Samples  []Sample            `json:"samples,omitempty"`
	Notes    map[string][]string `json:"notes,omitempty"`
	Commands map[string][]string `json:"commands"`
	// Host load while the bench ran: the 1-minute load average and the
	// number of other sandboxes (other people's test runs), every 5 s.
	Load []LoadSample `json:"host_load"`
}

// LoadSample is one look at how busy the host was.
type LoadSample struct {
	At      time.Time `json:"at"`
	Load1   float64   `json:"load1"`
	Foreign int       `json:"other_sandboxes"`
}

// ReloadResults is the reload figure.
type ReloadResults struct {
	Bm2Available bool        `json:"bm2_available"`
	Bm2Check     string      `json:"bm2_check"`
	Runs         []ReloadRun `json:"runs,omitempty"`
}

// minMed returns the minimum and the median (NaN for none).
func minMed(xs []float64) (lo, med float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[0], s[n/2]
	}
	return s[0], (s[n/2-1] + s[n/2]) / 2
}

func maxOf(xs []float64) float64 {
	m := math.NaN()
	for _, x := range xs {
		if math.IsNaN(m) || x > m {
			m = x
		}
	}
	return m
}

// series is a set of samples keyed by repetition, so that two series can be
// compared run by run.
type series map[int]float64

func (s series) values() []float64 {
	reps := make([]int, 0, len(s))
	for r := range s {
		reps = append(reps, r)
	}
	sort.Ints(reps)
	v := make([]float64, len(reps))
	for i, r := range reps {
		v[i] = s[r]
	}
	return v
}

// ratios divides a by b repetition by repetition (repetitions in both only).
func ratios(a, b series) []float64 {
	var out []float64
	for _, r := range sortedKeys(a) {
		if bv, ok := b[r]; ok && bv != 0 {
			out = append(out, a[r]/bv)
		}
	}
	return out
}

func sortedKeys(s series) []int {
	reps := make([]int, 0, len(s))
	for r := range s {
		reps = append(reps, r)
	}
	sort.Ints(reps)
	return reps
}
