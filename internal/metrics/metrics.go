package metrics

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/units"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Build is the bm2 that writes the exposition (bm2_build_info).
type Build struct {
	Version, GoVersion string
}

// Format is the exposition's format: the text format, version 0.0.4. Its
// string is the Content-Type of an HTTP answer.
var Format = expfmt.NewFormat(expfmt.TypeTextPlain)

// instanceLabels are the labels of every instance series.
var instanceLabels = []string{"project", "instance", "mode"}

func instanceDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, slices.Concat(instanceLabels, extra), nil)
}

// The series, in the order of bm2(1).
var (
	descUp = instanceDesc("bm2_instance_up",
		"Whether the instance is online, as bm2 list says: 1 online, 0 in any other state (unknown included).")
	descState = instanceDesc("bm2_instance_state",
		"The instance's state as bm2 list shows it, a state set: one series per state, 1 for the current one.", "state")
	descRestarts = instanceDesc("bm2_instance_restarts",
		"Automatic restarts of the instance since it was last started by hand (systemd's NRestarts).")
	descStart = instanceDesc("bm2_instance_start_time_seconds",
		"When the instance's running main process started (systemd's ExecMainStartTimestamp), in seconds since the Unix epoch.")
	descMemory = instanceDesc("bm2_instance_memory_bytes",
		"Memory the instance's control group uses (systemd's MemoryCurrent), in bytes.")
	descCPU = instanceDesc("bm2_instance_cpu_seconds_total",
		"CPU time the instance's control group has used (systemd's CPUUsageNSec), in seconds.")
	descTasks = instanceDesc("bm2_instance_tasks",
		"Processes and threads in the instance's control group (systemd's TasksCurrent).")
	descConnections = instanceDesc("bm2_instance_connections",
		"Established TCP connections on the instance's port that its processes hold: accepted ones (those not accepted yet are bm2_instance_accept_queue_length).")
	descQueued = instanceDesc("bm2_instance_accept_queue_length",
		"Connections to the instance's listeners on its port that the kernel completed and the app has not accepted yet.")
	descLimit = instanceDesc("bm2_instance_accept_queue_limit",
		"How many connections the accept queue of the instance's listeners on its port holds at most: the backlog the app asked for, capped by net.core.somaxconn.")
	descReuseport = instanceDesc("bm2_instance_reuseport",
		"The reusePort probe's verdict on the current run of an online cluster-mode instance, as bm2 list shows it, a state set: one series per verdict, 1 for the current one.", "verdict")
	descHealthy = instanceDesc("bm2_instance_healthy",
		"Whether the HTTP health check (health_path) found the current run of an online instance healthy, as bm2 list's HEALTH says: 1 healthy, 0 starting, unhealthy, pending or stale.")
	descHealthFailures = instanceDesc("bm2_instance_health_failures",
		"How many health checks in a row the current run of an online instance has failed (counted ones: the instance is restarted at health_failures).")
	descConfirm = instanceDesc("bm2_probe_confirm_seconds",
		"Time from the start of a cluster-mode instance's main process to the probe's reuseport_confirmed event on that run, in seconds.")
	descErrored = prometheus.NewDesc("bm2_project_errored",
		"Whether the project is errored (its errored mark: the probe or the exit hook stopped it until bm2 serve or bm2 start): 1 errored, else 0.",
		[]string{"project"}, nil)
	descInstances = prometheus.NewDesc("bm2_project_instances",
		"How many instances the project file asks for (instances).", []string{"project", "mode"}, nil)
	descBuild = prometheus.NewDesc("bm2_build_info",
		"The bm2 that wrote this exposition: its version and the Go toolchain that built it (as bm2 version says); always 1.",
		[]string{"version", "goversion"}, nil)

	allDescs = []*prometheus.Desc{descUp, descState, descRestarts, descStart, descMemory, descCPU, descTasks,
		descConnections, descQueued, descLimit, descReuseport, descHealthy, descHealthFailures, descConfirm, descErrored, descInstances, descBuild}
)

// Families are the metric families of snap's projects and instances, with
// figs their figures (the same Snapshot's), sorted by name, each one's
// series by their labels.
func Families(snap view.Snapshot, figs view.Figures, build Build) ([]*dto.MetricFamily, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(collector{snap: snap, figs: figs, build: build}); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	fams, err := reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return fams, nil
}

// Write writes families in the text format.
func Write(w io.Writer, fams []*dto.MetricFamily) error {
	enc := expfmt.NewEncoder(w, Format)
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			return fmt.Errorf("metrics: write %s: %w", f.GetName(), err)
		}
	}
	return nil
}

// Text is the exposition of snap and figs: Families, written.
func Text(snap view.Snapshot, figs view.Figures, build Build) ([]byte, error) {
	fams, err := Families(snap, figs, build)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := Write(&b, fams); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// collector emits a Snapshot's series as constant metrics.
type collector struct {
	snap  view.Snapshot
	figs  view.Figures
	build Build
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	emit := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		m, err := prometheus.NewConstMetric(d, t, v, labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(d, err)
		}
		ch <- m
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) { emit(d, prometheus.GaugeValue, v, labels...) }
	stateSet := func(d *prometheus.Desc, words []string, current string, labels ...string) {
		for _, w := range words {
			gauge(d, boolean(w == current), append(labels, w)...)
		}
	}

	gauge(descBuild, 1, c.build.Version, c.build.GoVersion)
	for j, ps := range c.snap.Projects {
		p := ps.Entry.Project
		if ps.Entry.Err != nil || p == nil {
			continue // invalid: no instance of it runs
		}
		mode := string(p.Mode)
		gauge(descInstances, float64(p.Instances), p.Name, mode)
		if ps.Warning == "" { // else its mark could not be read
			gauge(descErrored, boolean(ps.Errored), p.Name)
		}
		for k, i := range ps.IDs {
			l := []string{p.Name, units.InstanceID(p.Name, i), mode}
			v := c.snap.Instance(j, k)
			gauge(descUp, boolean(v.State == view.StateOnline), l...)
			st := v.State
			if !slices.Contains(view.InstanceStates, st) {
				st = view.StateUnknown // a word of systemd's bm2 has none for
			}
			stateSet(descState, view.InstanceStates, st, l...)
			if p.Mode == config.Cluster && v.Verdict != "" {
				stateSet(descReuseport, view.ReuseportVerdicts, v.Verdict, l...)
			}
			if v.Health != "" {
				gauge(descHealthy, boolean(v.Health == view.HealthHealthy), l...)
				if e := v.HealthEntry; e != nil && v.Health != view.HealthStale {
					gauge(descHealthFailures, float64(e.Failures), l...)
				}
			}
			if ps.Statuses != nil {
				u := ps.Statuses[k]
				gauge(descRestarts, float64(u.NRestarts), l...)
				if u.MainPID != 0 && !u.ExecMainStart.IsZero() {
					gauge(descStart, float64(u.ExecMainStart.UnixMicro())/1e6, l...)
				}
				if u.MemoryCurrent != view.Unknown {
					gauge(descMemory, float64(u.MemoryCurrent), l...)
				}
				if u.CPUUsageNSec != view.Unknown {
					emit(descCPU, prometheus.CounterValue, float64(u.CPUUsageNSec)/1e9, l...)
				}
				if u.TasksCurrent != view.Unknown {
					gauge(descTasks, float64(u.TasksCurrent), l...)
				}
			}
			f := c.figures(j, k)
			if f.Connections >= 0 {
				gauge(descConnections, float64(f.Connections), l...)
			}
			if f.AcceptQueued >= 0 {
				gauge(descQueued, float64(f.AcceptQueued), l...)
			}
			if f.AcceptLimit >= 0 {
				gauge(descLimit, float64(f.AcceptLimit), l...)
			}
			if f.ConfirmLatency > 0 {
				gauge(descConfirm, f.ConfirmLatency.Seconds(), l...)
			}
		}
	}
}

// figures are the k-th instance's of project j, unknown when figs has
// none for it.
func (c collector) figures(j, k int) view.InstanceFigures {
	if j < len(c.figs.Projects) && k < len(c.figs.Projects[j]) {
		return c.figs.Projects[j][k]
	}
	return view.UnknownFigures
}

func boolean(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
