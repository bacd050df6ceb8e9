package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/scrape"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// fakeSockets is the host's sockets as bm2 metrics reads them: the main
// process of each unit, the sockets each process holds (a process it does
// not know has exited), the sockets on each port.
type fakeSockets struct {
	mu          sync.Mutex
	fds         map[uint32][]uint64
	listeners   map[int][]sockdiag.Listener
	established map[int][]sockdiag.Connection
}

func (f *fakeSockets) PIDs(u UnitStatus) []uint32 {
	if u.MainPID == 0 {
		return nil
	}
	return []uint32{u.MainPID}
}

func (f *fakeSockets) SocketsOf(pid uint32, limit int) ([]uint64, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fds, ok := f.fds[pid]
	if !ok {
		return nil, 0, fmt.Errorf("pid %d: %w", pid, fs.ErrNotExist)
	}
	return fds, len(fds), nil
}

func (f *fakeSockets) Listeners() ([]sockdiag.Listener, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []sockdiag.Listener
	for _, port := range slices.Sorted(maps.Keys(f.listeners)) {
		for _, l := range f.listeners[port] {
			l.Port = port
			out = append(out, l)
		}
	}
	return out, nil
}

func (f *fakeSockets) Established(keep func(port int) bool) ([]sockdiag.Connection, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []sockdiag.Connection
	for _, port := range slices.Sorted(maps.Keys(f.established)) {
		if keep != nil && !keep(port) {
			continue
		}
		for _, c := range f.established[port] {
			c.Port = port
			out = append(out, c)
		}
	}
	return out, nil
}

// metricsEnv is listEnv with the sockets of api-0 (pid 1234) and web-2
// (pid 77).
func metricsEnv(t *testing.T) *testEnv {
	te := listEnv(t)
	te.sockets.fds = map[uint32][]uint64{1234: {10, 11, 12}, 77: {20}}
	te.sockets.listeners = map[int][]sockdiag.Listener{3000: {{Inode: 10, Queued: 1, Backlog: 511}, {Inode: 99, Queued: 4, Backlog: 511}}, 4002: {{Inode: 20, Backlog: 128}}}
	te.sockets.established = map[int][]sockdiag.Connection{3000: {{Inode: 11}, {Inode: 12}, {Inode: 0}, {Inode: 98}}}
	return te
}

func parseExposition(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("exposition: %v\n%s", err, text)
	}
	return fams
}

// instanceSeries are the series of one family for one instance, by
// their extra label's value ("" when it has none).
func instanceSeries(fams map[string]*dto.MetricFamily, name, instance, extra string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fams[name].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["instance"] == instance {
			out[l[extra]] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return out
}

func TestMetricsSaysWhatListSays(t *testing.T) {
	te := metricsEnv(t)
	te.mustRun(ExitOK, "list", "--json")
	var rows []view.Row
	if err := json.Unmarshal(te.stdout.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	te.mustRun(ExitOK, "metrics")
	fams := parseExposition(t, te.stdout.Bytes())
	if !strings.Contains(te.stderr.String(), "bm2: warning: project bad is invalid") {
		t.Errorf("stderr: %s", te.stderr.String())
	}
	instances := 0
	for _, r := range rows {
		if r.ID == nil && !r.Surge {
			continue // invalid
		}
		instances++
		id := strings.TrimSuffix(strings.TrimPrefix(r.Unit, "bm2@"), ".service")
		states := instanceSeries(fams, "bm2_instance_state", id, "state")
		if states[r.State] != 1 {
			t.Errorf("%s: list says %q, metrics %v", id, r.State, states)
		}
		up := instanceSeries(fams, "bm2_instance_up", id, "")
		if len(up) != 1 || (up[""] == 1) != (r.State == "online") {
			t.Errorf("%s: up %v in state %q", id, up, r.State)
		}
		verdicts := instanceSeries(fams, "bm2_instance_reuseport", id, "verdict")
		switch {
		case r.Reuseport == nil && len(verdicts) != 0:
			t.Errorf("%s: list shows no verdict, metrics %v", id, verdicts)
		case r.Reuseport != nil && verdicts[*r.Reuseport] != 1:
			t.Errorf("%s: list says %q, metrics %v", id, *r.Reuseport, verdicts)
		}
		mem := instanceSeries(fams, "bm2_instance_memory_bytes", id, "")
		if (r.MemoryBytes == nil) != (len(mem) == 0) || r.MemoryBytes != nil && mem[""] != float64(*r.MemoryBytes) {
			t.Errorf("%s: list's memory %v, metrics %v", id, r.MemoryBytes, mem)
		}
	}
	if got := len(fams["bm2_instance_up"].GetMetric()); got != instances || instances != 8 {
		t.Errorf("%d instances up or down, list has %d", got, instances)
	}

	// The kernel's figures, for the sockets each instance holds.
	for _, c := range []struct {
		name, instance string
		want           float64 // -1: absent
	}{
		{"bm2_instance_connections", "api-0", 2},
		{"bm2_instance_accept_queue_length", "api-0", 1},
		{"bm2_instance_accept_queue_limit", "api-0", 511},
		{"bm2_instance_connections", "web-2", 0},
		{"bm2_instance_accept_queue_limit", "web-2", 128},
		{"bm2_instance_connections", "api-1", -1},  // launching
		{"bm2_probe_confirm_seconds", "api-0", -1}, // the fake journal's events have no invocation
	} {
		s := instanceSeries(fams, c.name, c.instance, "")
		if c.want < 0 && len(s) != 0 || c.want >= 0 && (len(s) != 1 || s[""] != c.want) {
			t.Errorf("%s{instance=%q} = %v, want %v", c.name, c.instance, s, c.want)
		}
	}
	if b := fams["bm2_build_info"].GetMetric(); len(b) != 1 {
		t.Errorf("build info %v", b)
	}

	// Named projects only.
	te.mustRun(ExitOK, "metrics", "web")
	fams = parseExposition(t, te.stdout.Bytes())
	if n := len(fams["bm2_instance_up"].GetMetric()); n != 3 || len(instanceSeries(fams, "bm2_instance_up", "web-0", "")) != 1 {
		t.Errorf("bm2 metrics web: %d instances", n)
	}
	te.mustRun(ExitNoProject, "metrics", "nope")
}

// The probe's listen-to-confirm latency is the time from the run's start
// to the confirmation of that run (its InvocationID), read beside the
// kernel's figures; a confirmation of an earlier run is not this one's.
func TestMetricsConfirmLatency(t *testing.T) {
	te := metricsEnv(t)
	start := te.now.Add(-time.Minute)
	te.sd.set(UnitStatus{Name: "bm2@api-0.service", ActiveState: "active", SubState: "running", MainPID: 1234,
		ActiveEnter: start, ExecMainStart: start, InvocationID: "0a0a", MemoryCurrent: 1, CPUUsageNSec: 1})
	confirm := func(at time.Time, invocation string) {
		te.entries.add(journal.Entry{
			"__REALTIME_TIMESTAMP": fmt.Sprint(at.UnixMicro()), "SYSLOG_IDENTIFIER": journal.Identifier, "_UID": "0",
			"_TRANSPORT": "journal", "MESSAGE": "api-0: confirmed", "PRIORITY": "6",
			"MESSAGE_ID": journal.ReuseportConfirmed.MessageID(), "BM2_EVENT": string(journal.ReuseportConfirmed),
			"BM2_PROJECT": "api", "BM2_INSTANCE": "api-0", "BM2_INVOCATION": invocation, "BM2_LEVEL": "info",
		})
	}
	confirm(start.Add(-time.Hour), "0b0b") // an earlier run
	confirm(start.Add(375*time.Millisecond), "0a0a")
	te.mustRun(ExitOK, "metrics", "api")
	fams := parseExposition(t, te.stdout.Bytes())
	if s := instanceSeries(fams, "bm2_probe_confirm_seconds", "api-0", ""); len(s) != 1 || s[""] != 0.375 {
		t.Errorf("confirm latency %v, want 0.375", s)
	}
	if s := instanceSeries(fams, "bm2_instance_connections", "api-0", ""); len(s) != 1 || s[""] != 2 {
		t.Errorf("connections %v, want 2", s)
	}
}

func TestMetricsWithoutSystemd(t *testing.T) {
	te := metricsEnv(t)
	te.noSD = true
	te.mustRun(ExitOK, "metrics")
	fams := parseExposition(t, te.stdout.Bytes())
	if s := instanceSeries(fams, "bm2_instance_state", "api-0", "state"); s["unknown"] != 1 {
		t.Errorf("api-0 without systemd: %v", s)
	}
	if fams["bm2_instance_memory_bytes"] != nil || fams["bm2_instance_restarts"] != nil {
		t.Error("figures systemd did not give are written")
	}
	if !strings.Contains(te.stderr.String(), "instance states are unknown") {
		t.Errorf("stderr: %s", te.stderr.String())
	}
}

func TestMetricsHTTPOnStdin(t *testing.T) {
	// Standard input that is not a socket: the request from it, the
	// answer on standard output, byte for byte (CRLFs are not escaped).
	te := metricsEnv(t)
	a := te.app()
	a.In = strings.NewReader("GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n")
	if code := a.Main(context.Background(), []string{"metrics", "--http"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, te.stderr.String())
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(te.stdout.Bytes())), nil)
	if err != nil {
		t.Fatalf("%v\n%q", err, te.stdout.String())
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || len(parseExposition(t, body)["bm2_instance_up"].GetMetric()) != 8 {
		t.Errorf("%d\n%s", resp.StatusCode, body)
	}
	if !strings.Contains(te.stderr.String(), "bm2: warning: project bad is invalid") {
		t.Errorf("stderr: %s", te.stderr.String())
	}

	// A bad request is answered, and bm2 exits 0 all the same.
	te.stdout.Reset()
	te.stderr.Reset()
	a = te.app()
	a.In = strings.NewReader("hello\r\n\r\n")
	if code := a.Main(context.Background(), []string{"metrics", "--http"}); code != ExitOK ||
		!strings.HasPrefix(te.stdout.String(), "HTTP/1.1 400 Bad Request\r\n") || !strings.Contains(te.stderr.String(), "HTTP request") {
		t.Errorf("exit %d\n%q\n%s", code, te.stdout.String(), te.stderr.String())
	}
}

func TestMetricsHTTPOnASocket(t *testing.T) {
	// As a socket unit with Accept=yes runs it: the connection is
	// standard input, output and error. The answer goes to the socket;
	// the warnings go to the journal, not into the answer.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answer := make(chan []byte, 1)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			answer <- []byte(err.Error())
			return
		}
		defer c.Close()
		io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n")
		b, _ := io.ReadAll(c)
		answer <- b
	}()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	f, err := conn.(*net.TCPConn).File()
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	defer func(old func(context.Context, string)) { journalWarning = old }(journalWarning)
	journalWarning = func(_ context.Context, msg string) { logged = append(logged, msg) }

	te := metricsEnv(t)
	a := te.app()
	a.In, a.Out, a.Err = f, f, f
	code := a.Main(context.Background(), []string{"metrics", "--http"})
	f.Close()
	got := <-answer
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), nil)
	if err != nil {
		t.Fatalf("%v\n%q", err, got)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || bytes.Contains(got, []byte("warning")) {
		t.Errorf("%d\n%s", resp.StatusCode, got)
	}
	parseExposition(t, body)
	if len(logged) == 0 || !strings.Contains(strings.Join(logged, "\n"), "bm2 metrics: project bad is invalid") {
		t.Errorf("journal: %q", logged)
	}
}

// The help gives the bounds the code sets.
func TestMetricsHelpSaysTheBounds(t *testing.T) {
	long := help("metrics").long
	for _, s := range []string{
		"at most " + strconv.Itoa(sockdiag.MaxFDs) + " file\ndescriptors",
		fmt.Sprintf("%d KiB", scrape.HeaderLimit>>10),
		fmt.Sprintf("%d s.", int(scrape.ReadTimeout.Seconds())),
	} {
		if !strings.Contains(long, s) {
			t.Errorf("bm2 metrics --help does not say %q", s)
		}
	}
}

// A project named twice is shown once: the registry refuses the same
// series twice, and the whole exposition with them.
func TestMetricsNamedTwice(t *testing.T) {
	te := metricsEnv(t)
	te.mustRun(ExitOK, "metrics", "api", "api")
	fams := parseExposition(t, te.stdout.Bytes())
	if fams["bm2_instance_up"] == nil || len(fams["bm2_instance_up"].Metric) == 0 {
		t.Fatalf("no bm2_instance_up:\n%s", te.stdout.String())
	}
	te.stdout.Reset()
	te.mustRun(ExitOK, "list", "--json", "api", "api")
	var rows []map[string]any
	if err := json.Unmarshal(te.stdout.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if n := len(fams["bm2_instance_up"].Metric); n != len(rows) {
		t.Errorf("metrics has %d instances, list %d", n, len(rows))
	}
}
