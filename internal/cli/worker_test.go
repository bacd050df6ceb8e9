package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

const seedWorker = `name = "queue"
script = "worker.js"
runtime = "node"
instances = 2
`

// A project without port is a worker: serve registers and starts it,
// waits for each instance to stay up min_uptime_ms (there is no port to
// listen on and no probe verdict), and says so.
func TestServeWorker(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/queue/bm2.toml", seedWorker))
	te.mustRun(ExitOK, "serve", dir)
	out := te.stdout.String()
	t.Logf("serve:\n%s%s", out, te.stderr.String())
	for _, want := range []string{
		`project "queue", 2 x worker (no port), runtime node`,
		"queue-0 online (pid ",
		"queue-1 online (pid ",
		"2 x worker (no port), runtime node",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("serve's output lacks %q", want)
		}
	}
	if strings.Contains(out, "port 0") || strings.Contains(out, "confirmed") || strings.Contains(out, "listening") {
		t.Errorf("serve speaks of a port, a listener or a verdict for a worker:\n%s", out)
	}
}

// What the other commands say of a worker: no port in list, check and
// status; the fence allows an ephemeral port only; the gateway refuses it
// by name; metrics gives it the mode label worker.
func TestWorkerCommands(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/queue/bm2.toml", seedWorker))
	te.mustRun(ExitOK, "serve", dir)
	for _, c := range []struct {
		args []string
		code int
		want []string
		not  []string
	}{
		{[]string{"list"}, ExitOK, []string{"queue    0   worker  online  -       1001  -  "}, nil},
		{[]string{"list", "--json"}, ExitOK, []string{`"mode": "worker"`, `"port": 0,`}, nil},
		{[]string{"check", dir}, ExitOK, []string{
			"project \"queue\", 2 x worker (no port), runtime node",
			"ports: none (a worker: no port of its own, no probe, no gateway)",
			"an instance may bind only an ephemeral port (a worker has no port of its own)",
		}, []string{"port 0", "reusePort"}},
		{[]string{"status", "queue"}, ExitOK, []string{"2 x worker (no port), runtime node"}, []string{"port 0"}},
		{[]string{"gateway", "nginx", "queue"}, ExitInvalid, []string{`project "queue": is a worker (no port): it serves nothing a gateway could pass requests to`}, nil},
		{[]string{"metrics", "queue"}, ExitOK, []string{`bm2_instance_up{instance="queue-1",mode="worker",project="queue"} 1`}, []string{"bm2_instance_connections", "bm2_instance_reuseport"}},
	} {
		te.stdout.Reset()
		te.stderr.Reset()
		code := te.run(c.args...)
		out := te.stdout.String() + te.stderr.String()
		if code != c.code {
			t.Errorf("bm2 %s: exit %d, want %d\n%s", strings.Join(c.args, " "), code, c.code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("bm2 %s lacks %q:\n%s", strings.Join(c.args, " "), w, out)
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("bm2 %s has %q:\n%s", strings.Join(c.args, " "), n, out)
			}
		}
	}
}
