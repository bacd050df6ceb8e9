package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// samples parses the text format as bm2 metrics writes it: no escapes in
// the label values the tests use, no timestamps.
func samples(t *testing.T, text string) []sample {
	t.Helper()
	var out []sample
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := sample{labels: map[string]string{}}
		// The value follows the last space: label values may hold spaces
		// ("waiting restart").
		cut := strings.LastIndexByte(line, ' ')
		head, val, ok := line[:max(cut, 0)], line[cut+1:], cut > 0
		if !ok {
			t.Fatalf("not a sample: %q", line)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			t.Fatalf("not a sample: %q: %v", line, err)
		}
		s.value = v
		name, labels, has := strings.Cut(head, "{")
		s.name = name
		if has {
			for _, kv := range strings.Split(strings.TrimSuffix(labels, "}"), `",`) {
				k, v, _ := strings.Cut(kv, "=")
				s.labels[k] = strings.Trim(v, `"`)
			}
		}
		out = append(out, s)
	}
	return out
}

// find returns the value of the sample with that name and labels.
func find(ss []sample, name string, labels ...string) (float64, bool) {
	for _, s := range ss {
		if s.name != name {
			continue
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && s.labels[labels[i]] == labels[i+1]
		}
		if match {
			return s.value, true
		}
	}
	return 0, false
}

// bm2 metrics on the real systemd and kernel, then scraped through
// bm2-metrics.socket by a real Prometheus (Debian's): promtool accepts the
// output; every instance has its series, with the kernel's figures for
// connections and the accept queue; the socket answers one request a
// connection with Connection: close, and its service leaves no process
// behind once idle; a flood of connections does not leave it failed; and
// no project may take its port.
func TestMetrics(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/mx", "node-server.js", "server.js")
	b.write("/srv/mx/bm2.toml", "name = \"mx\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3000\n")
	b.app("/srv/mf", "node-server.js", "server.js")
	b.write("/srv/mf/bm2.toml", "name = \"mf\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3100\nexec_mode = \"fork\"\n")
	b.must(0, "/srv/mx", "serve")
	b.must(0, "/srv/mf", "serve")
	b.settledProject("mx", 2)
	instances := map[string]string{"mx-0": "cluster", "mx-1": "cluster", "mf-0": "fork", "mf-1": "fork"}

	// A connection held open to mf-1 (fork mode: port 3101, its own).
	b.sh(`nohup bash -c 'exec 3<>/dev/tcp/127.0.0.1/3101; sleep 600' >/dev/null 2>&1 &`)

	t.Run("bm2 metrics", func(t *testing.T) {
		b := b.in(t)
		var text string
		var ss []sample
		// The held connection counts once the app has accepted it.
		deadline := time.Now().Add(20 * time.Second)
		for {
			text = b.must(0, "/", "metrics").stdout
			ss = samples(t, text)
			if v, ok := find(ss, "bm2_instance_connections", "instance", "mf-1"); ok && v == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("mf-1 never showed the held connection:\n%s", text)
			}
			time.Sleep(200 * time.Millisecond)
		}
		b.write("/tmp/metrics.txt", text)
		for inst, mode := range instances {
			project := inst[:2]
			if v, ok := find(ss, "bm2_instance_up", "instance", inst, "project", project, "mode", mode); !ok || v != 1 {
				t.Errorf("%s: bm2_instance_up %v (found %v)", inst, v, ok)
			}
			if v, ok := find(ss, "bm2_instance_state", "instance", inst, "state", "online"); !ok || v != 1 {
				t.Errorf("%s: bm2_instance_state{state=online} %v (found %v)", inst, v, ok)
			}
			if v, ok := find(ss, "bm2_instance_memory_bytes", "instance", inst); !ok || v < 1<<20 {
				t.Errorf("%s: bm2_instance_memory_bytes %v (found %v): a Node.js app takes more than 1 MiB", inst, v, ok)
			}
			if v, ok := find(ss, "bm2_instance_tasks", "instance", inst); !ok || v < 1 {
				t.Errorf("%s: bm2_instance_tasks %v (found %v)", inst, v, ok)
			}
			// Present exactly when systemd counts the instance's CPU (the
			// sandbox's separately mounted cpu and cpuacct hierarchies
			// leave it "[not set]"): unknown is left out, never 0.
			counted := b.show("bm2@"+inst+".service", "CPUUsageNSec") != "[not set]"
			if _, ok := find(ss, "bm2_instance_cpu_seconds_total", "instance", inst); ok != counted {
				t.Errorf("%s: bm2_instance_cpu_seconds_total present %v, systemd counts CPU %v", inst, ok, counted)
			}
			// Node's default backlog is 511 (below the namespace's somaxconn).
			if v, ok := find(ss, "bm2_instance_accept_queue_limit", "instance", inst); !ok || v != 511 {
				t.Errorf("%s: bm2_instance_accept_queue_limit %v (found %v), want 511", inst, v, ok)
			}
			if v, ok := find(ss, "bm2_instance_accept_queue_length", "instance", inst); !ok || v != 0 {
				t.Errorf("%s: bm2_instance_accept_queue_length %v (found %v), want 0", inst, v, ok)
			}
		}
		if v, _ := find(ss, "bm2_instance_connections", "instance", "mf-0"); v != 0 {
			t.Errorf("mf-0 has %v connections; the held one is mf-1's", v)
		}
		for _, inst := range []string{"mx-0", "mx-1"} {
			if v, ok := find(ss, "bm2_instance_reuseport", "instance", inst, "verdict", "confirmed"); !ok || v != 1 {
				t.Errorf("%s: bm2_instance_reuseport{verdict=confirmed} %v (found %v)", inst, v, ok)
			}
			if v, ok := find(ss, "bm2_probe_confirm_seconds", "instance", inst); !ok || v <= 0 || v > 60 {
				t.Errorf("%s: bm2_probe_confirm_seconds %v (found %v)", inst, v, ok)
			}
		}
		if _, ok := find(ss, "bm2_instance_reuseport", "instance", "mf-0"); ok {
			t.Error("a fork-mode instance has a reusePort verdict")
		}
		if v, ok := find(ss, "bm2_project_instances", "project", "mf"); !ok || v != 2 {
			t.Errorf("bm2_project_instances{project=mf} %v (found %v)", v, ok)
		}
		if v, ok := find(ss, "bm2_build_info"); !ok || v != 1 {
			t.Errorf("bm2_build_info %v (found %v)", v, ok)
		}
		b.need("promtool", "prometheus")
		if out, err := b.try("promtool check metrics < /tmp/metrics.txt"); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	})

	t.Run("the port is kept from projects", func(t *testing.T) {
		b := b.in(t)
		b.app("/srv/squat", "node-server.js", "server.js")
		b.write("/srv/squat/bm2.toml", "name = \"squat\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 9615\n")
		r := b.must(3, "/srv/squat", "serve")
		if !strings.Contains(r.stderr, "port conflict: squat port range 9615~9615 overlaps bm2-metrics.socket 9615~9615") {
			t.Errorf("serve on the metrics port:\n%s", r.stderr)
		}
		if r := b.must(3, "/srv/squat", "check"); !strings.Contains(r.stdout+r.stderr, "bm2-metrics.socket") {
			t.Errorf("check on the metrics port:\n%s%s", r.stdout, r.stderr)
		}
	})

	b.sh("systemctl enable --now bm2-metrics.socket")

	t.Run("socket", func(t *testing.T) {
		b := b.in(t)
		out := b.sh(`curl -sS -D /tmp/h --max-time 10 http://127.0.0.1:9615/metrics`)
		ss := samples(t, out)
		for inst := range instances {
			if _, ok := find(ss, "bm2_instance_up", "instance", inst); !ok {
				t.Errorf("the scrape has no bm2_instance_up for %s:\n%s", inst, out)
			}
		}
		if h := strings.ToLower(b.sh("cat /tmp/h")); !strings.Contains(h, "connection: close") || !strings.Contains(h, "content-type: text/plain") {
			t.Errorf("response headers:\n%s", h)
		}
		if code := b.sh(`curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://127.0.0.1:9615/nothing`); code != "404" {
			t.Errorf("GET /nothing: %s, want 404", code)
		}
		b.noScrapeLeft()
	})

	t.Run("prometheus scrapes it", func(t *testing.T) {
		b := b.in(t)
		b.need("prometheus", "prometheus")
		b.write("/tmp/prom/prometheus.yml", `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: bm2
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:9615"]
        labels: {host: sandbox}
`)
		b.sh(`systemd-run --unit=prom-e2e --property=Type=exec /usr/bin/prometheus --config.file=/tmp/prom/prometheus.yml \
  --storage.tsdb.path=/tmp/prom/data --web.listen-address=127.0.0.1:9090`)
		defer b.try("systemctl stop prom-e2e.service")
		query := func(q string) []map[string]any {
			out, err := b.try("curl -sf --max-time 5 'http://127.0.0.1:9090/api/v1/query?query=" + url.QueryEscape(q) + "'")
			if err != nil {
				return nil
			}
			var res struct {
				Data struct {
					Result []map[string]any `json:"result"`
				} `json:"data"`
			}
			if json.Unmarshal([]byte(out), &res) != nil {
				return nil
			}
			return res.Data.Result
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			up := query(`up{job="bm2"}`)
			series := query(`bm2_instance_up{job="bm2"} == 1`)
			if len(up) == 1 && fmt.Sprint(up[0]["value"].([]any)[1]) == "1" && len(series) == len(instances) {
				seen := map[string]bool{}
				for _, s := range series {
					m := s["metric"].(map[string]any)
					seen[fmt.Sprint(m["instance"])] = true
					if m["host"] != "sandbox" {
						t.Errorf("a series without the target's host label: %v", m)
					}
				}
				for inst := range instances {
					if !seen[inst] {
						t.Errorf("prometheus has no bm2_instance_up for %s: %v", inst, series)
					}
				}
				break
			}
			if time.Now().After(deadline) {
				log, _ := b.try("journalctl -u prom-e2e.service -n 30 --no-pager; journalctl -u bm2-metrics.service -n 30 --no-pager")
				t.Fatalf("prometheus: up=%v, bm2_instance_up=%v\n%s", up, series, log)
			}
			time.Sleep(500 * time.Millisecond)
		}
		b.sh("systemctl stop prom-e2e.service")
		b.noScrapeLeft()
	})

	t.Run("a flood does not fail the socket", func(t *testing.T) {
		b := b.in(t)
		// 3,000 connections, 300 at a time, each closed at once: 15 times
		// systemd's default trigger limit for Accept=yes (200 in 2 s).
		b.floodMetrics()
		b.eventually(30*time.Second, "a scrape after the flood", `curl -sf --max-time 10 http://127.0.0.1:9615/metrics | grep -q '^bm2_instance_up{'`)
		b.noScrapeLeft()
	})
}

// need skips the test, naming the Debian package, when the sandbox has no
// cmd (make test-deps installs it; with CI=true the skip fails).
func (b *bed) need(cmd, pkg string) {
	b.t.Helper()
	if _, err := b.try("command -v " + cmd); err != nil {
		testutil.Skip(b.t, testutil.Need{What: "no " + cmd, Fix: "sudo apt-get install " + pkg + " (make test-deps)"}, err)
	}
}

// noScrapeLeft waits until bm2-metrics.service has ended, idle, and no
// bm2 process is left: between scrapes (10 s apart or more) bm2 runs
// nothing.
func (b *bed) noScrapeLeft() {
	b.t.Helper()
	b.eventually(40*time.Second, "no scrape left running",
		`systemctl is-active -q bm2-metrics.socket && ! systemctl is-active -q bm2-metrics.service && ! pgrep -f '^/usr/bin/bm2 --system metrics'`)
	if r := b.show("bm2-metrics.service", "Result"); r != "success" {
		b.t.Errorf("bm2-metrics.service ended with %q", r)
	}
}

// floodMetrics runs metricsFlood and checks that the socket is still
// active, not failed.
func (b *bed) floodMetrics() {
	b.t.Helper()
	b.write("/tmp/flood.js", metricsFlood)
	if out := b.sh("/usr/local/bin/node /tmp/flood.js"); !strings.Contains(out, "done") {
		b.t.Fatalf("flood: %s", out)
	}
	if st := b.show("bm2-metrics.socket", "ActiveState") + " " + b.show("bm2-metrics.socket", "Result"); st != "active success" {
		b.t.Errorf("after the flood bm2-metrics.socket is %s", st)
	}
}

// metricsFlood is a Node.js script that opens 3,000 connections to the
// metrics socket, 300 at a time, closing each at once, and prints "done".
const metricsFlood = `const net = require("node:net");
let left = 3000, open = 0, done = 0;
function one() {
  if (left === 0) return;
  left--; open++;
  const s = net.connect(9615, "127.0.0.1");
  const end = () => { if (s.ended) return; s.ended = true; s.destroy(); open--; done++; if (done === 3000) { console.log("done"); } else { one(); } };
  s.on("connect", end); s.on("error", end);
}
for (let i = 0; i < 300; i++) one();
`
