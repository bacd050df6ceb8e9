package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/sandbox"
)

// run is one bm2 command line run inside a sandbox.
type run struct {
	stdout, stderr string
	code           int
}

// bm2 runs `cd dir && bm2 args...` inside the sandbox.
func (b *bed) bm2(dir string, args ...string) run {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := append([]string{"bash", "-c", `cd "$1" && shift && exec bm2 "$@"`, "bash", dir}, args...)
	return b.execRun(ctx, "bm2 "+strings.Join(args, " "), argv...)
}

// execRun runs argv inside the sandbox: its output and exit code; what
// names it when it could not run at all.
func (b *bed) execRun(ctx context.Context, what string, argv ...string) run {
	b.t.Helper()
	stdout, stderr, err := b.Exec(ctx, argv...)
	r := run{stdout: stdout, stderr: stderr}
	var ee *sandbox.ExecError
	switch {
	case errors.As(err, &ee) && ee.ExitCode > 0:
		r.code = ee.ExitCode
	case err != nil:
		b.t.Fatalf("%s: %v", what, err)
	}
	return r
}

// must runs bm2 and fails the test unless it exits with code want.
func (b *bed) must(want int, dir string, args ...string) run {
	b.t.Helper()
	r := b.bm2(dir, args...)
	if r.code != want {
		b.t.Fatalf("bm2 %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
	}
	return r
}

// listRow is one object of bm2 list --json.
type listRow struct {
	Project   string  `json:"project"`
	ID        *int    `json:"id"`
	Unit      string  `json:"unit"`
	Mode      string  `json:"mode"`
	State     string  `json:"state"`
	Reason    string  `json:"reason"`
	PID       int     `json:"pid"`
	Port      int     `json:"port"`
	Reuseport *string `json:"reuseport"`
	Restarts  int     `json:"restarts"`
	Holder    string  `json:"holder"`
}

func (b *bed) listJSON(names ...string) []listRow {
	b.t.Helper()
	r := b.must(0, "/", append([]string{"list", "--json"}, names...)...)
	var rows []listRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		b.t.Fatalf("bm2 list --json: %v\n%s", err, r.stdout)
	}
	return rows
}

// pids returns the main PIDs of a project's instances.
func (b *bed) pids(project string, n int) []string {
	b.t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = b.show(fmt.Sprintf("bm2@%s-%d.service", project, i), "MainPID")
	}
	return out
}

// confirmedNow asserts that every instance of a cluster project has a
// reuseport_confirmed event logged since its current run came online.
func (b *bed) confirmedNow(project string, n int) {
	b.t.Helper()
	for i := 0; i < n; i++ {
		unit := fmt.Sprintf("bm2@%s-%d.service", project, i)
		since := b.show(unit, "ActiveEnterTimestamp")
		var us int64
		fmt.Sscan(strings.TrimSpace(b.sh(fmt.Sprintf(`date -d %q +%%s%%6N`, since))), &us)
		ok := false
		for _, e := range b.journal(fmt.Sprintf("-t bm2 BM2_EVENT=reuseport_confirmed BM2_INSTANCE=%s-%d", project, i)) {
			// ActiveEnterTimestamp is shown to the second.
			ok = ok || e.usec("__REALTIME_TIMESTAMP") >= us
		}
		if !ok {
			b.t.Errorf("%s-%d has no reuseport_confirmed event since it came online (%s)", project, i, since)
		}
	}
}

const apiToml = `name = "api"
script = "index.ts"
instances = 4
port = 3000
`

// Every command against a healthy Bun project in cluster mode, as a
// person would type them in the project dir.
func TestCLIServeCluster(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/api", "graceful-bun.ts", "index.ts")
	b.write("/srv/api/bm2.toml", apiToml)

	// The seed's check output, before anything runs.
	r := b.must(0, "/srv/api", "check")
	wantCheck := "config ok: project \"api\", 4 x cluster on port 3000, runtime bun, as bm2-api:bm2-api\nnotify: disabled\nports 3000~3000: free\n"
	if !strings.HasPrefix(r.stdout, wantCheck) {
		t.Fatalf("bm2 check:\n%s\nwant it to start with:\n%s", r.stdout, wantCheck)
	}

	r = b.must(0, "/srv/api", "serve")
	for i := 0; i < 4; i++ {
		for _, want := range []string{fmt.Sprintf("api-%d online (pid ", i), fmt.Sprintf("api-%d confirmed (reusePort)\n", i)} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("serve's output lacks %q:\n%s", want, r.stdout)
			}
		}
	}
	if !strings.Contains(r.stdout, "\napi online and confirmed: 4 x cluster on port 3000, runtime bun (") {
		t.Errorf("serve's last line:\n%s", r.stdout)
	}
	t.Logf("bm2 serve:\n%s", r.stdout)
	b.confirmedNow("api", 4)
	b.sh(`test -f /etc/bm2/api.toml`)
	// serve did not make systemd load the instances before their drop-ins
	// existed (systemd would log "has no ExecStart=" into their logs).
	if out := b.sh(`journalctl --no-pager -o cat -u 'bm2@api-*' | grep 'has no ExecStart' || true`); out != "" {
		t.Errorf("noise in the instances' logs:\n%s", out)
	}

	t.Run("serve twice changes nothing", func(t *testing.T) {
		b := b.in(t)
		pids := b.pids("api", 4)
		mtime := b.sh(`stat -c %Y.%i /etc/bm2/api.toml`)
		r := b.must(0, "/srv/api", "serve")
		if !strings.HasPrefix(r.stdout, "/etc/bm2/api.toml is up to date") || strings.Contains(r.stdout, "starting") || strings.Contains(r.stdout, "cleared") {
			t.Errorf("second serve:\n%s", r.stdout)
		}
		if got := b.pids("api", 4); fmt.Sprint(got) != fmt.Sprint(pids) {
			t.Errorf("instances restarted: pids %v, were %v", got, pids)
		}
		if got := b.sh(`stat -c %Y.%i /etc/bm2/api.toml`); got != mtime {
			t.Errorf("/etc/bm2/api.toml rewritten")
		}
	})

	t.Run("check against the running project", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/srv/api", "check")
		want := "config ok: project \"api\", 4 x cluster on port 3000, runtime bun, as bm2-api:bm2-api\nnotify: disabled\nports 3000~3000: held by a shared listener (joinable)\n"
		if !strings.HasPrefix(r.stdout, want) {
			t.Errorf("bm2 check:\n%s\nwant it to start with:\n%s", r.stdout, want)
		}
		if r := b.must(0, "/", "check", "api"); !strings.HasPrefix(r.stdout, want) {
			t.Errorf("bm2 check api:\n%s", r.stdout)
		}
	})

	t.Run("list and status", func(t *testing.T) {
		b := b.in(t)
		rows := b.listJSON()
		if len(rows) != 4 {
			t.Fatalf("%d rows: %+v", len(rows), rows)
		}
		for i, row := range rows {
			if row.Project != "api" || row.ID == nil || *row.ID != i || row.State != "online" || row.Mode != "cluster" ||
				row.Port != 3000 || row.PID == 0 || row.Reuseport == nil || *row.Reuseport != "confirmed" {
				t.Errorf("row %d: %+v", i, row)
			}
		}
		r := b.must(0, "/", "list")
		if !regexp.MustCompile(`(?m)^api +2 +cluster +online +- +\d+ +3000 +confirmed +- +0 +\d+s +[0-9.]+M `).MatchString(r.stdout) {
			t.Errorf("bm2 list:\n%s", r.stdout)
		}
		r = b.must(0, "/", "status", "api")
		for _, want := range []string{"api: /etc/bm2/api.toml", "4 x cluster on port 3000, runtime bun", "script index.ts in /srv/api", "bm2@api-3.service"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("bm2 status lacks %q:\n%s", want, r.stdout)
			}
		}
	})

	t.Run("logs", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/", "logs", "api", "-n", "200")
		for i := 0; i < 4; i++ {
			if !regexp.MustCompile(fmt.Sprintf(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d api-%d \| instance %d listening on 3000$`, i, i)).MatchString(r.stdout) {
				t.Errorf("bm2 logs api lacks api-%d's output:\n%s", i, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "systemd: ") {
			t.Errorf("bm2 logs api shows systemd's lines without --systemd:\n%s", r.stdout)
		}
		if r := b.must(0, "/", "logs", "api", "-n", "200", "--systemd"); !strings.Contains(r.stdout, "api-1 | systemd: Started") {
			t.Errorf("bm2 logs api --systemd lacks systemd's lines:\n%s", r.stdout)
		}
		r = b.must(0, "/", "logs", "api-2", "-n", "1")
		if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 || !strings.Contains(lines[0], " api-2 | ") {
			t.Errorf("bm2 logs api-2 -n 1:\n%s", r.stdout)
		}
		// -f follows until interrupted, which ends it normally.
		out := b.sh(`timeout --preserve-status -s INT 2 bm2 logs api -f -n 2; echo "exit=$?"`)
		if !strings.HasSuffix(out, "exit=0\n") || strings.Count(out, " | ") != 2 {
			t.Errorf("bm2 logs api -f -n 2:\n%s", out)
		}
		b.must(4, "/", "logs", "nope")
		b.must(2, "/", "logs", "api", "-n", "many")
	})

	t.Run("events", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/", "events", "api", "--json", "-n", "all")
		keys := []string{"time", "event", "project", "instance", "reason", "level", "message", "detail", "message_id"}
		confirmed := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var ev map[string]any
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("bm2 events --json line %q: %v", line, err)
			}
			if len(ev) != len(keys) {
				t.Errorf("keys of %v, want %v", ev, keys)
			}
			for _, k := range keys {
				if _, ok := ev[k]; !ok {
					t.Errorf("no %q in %v", k, ev)
				}
			}
			if ev["event"] == "reuseport_confirmed" {
				inst, _ := ev["instance"].(string)
				confirmed[inst] = true
				if ev["project"] != "api" || ev["level"] != "info" || ev["message_id"] != "44f30fffb0214cdeb15b218ca0731307" || ev["reason"] != nil {
					t.Errorf("confirmed event: %v", ev)
				}
				if _, err := time.Parse(time.RFC3339Nano, ev["time"].(string)); err != nil {
					t.Errorf("time: %v", err)
				}
			}
		}
		if len(confirmed) != 4 {
			t.Errorf("reuseport_confirmed for %v, want api-0..3:\n%s", confirmed, r.stdout)
		}
		r = b.must(0, "/", "events", "api-1")
		if !strings.HasPrefix(r.stdout, "TIME ") || !regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +api +api-1 +reuseport_confirmed +- +api-1: port 3000 is shared`).MatchString(r.stdout) {
			t.Errorf("bm2 events api-1:\n%s", r.stdout)
		}
		if strings.Contains(r.stdout, "api-0") {
			t.Errorf("bm2 events api-1 shows api-0:\n%s", r.stdout)
		}
	})

	t.Run("stop, start and restart one instance and the project", func(t *testing.T) {
		b := b.in(t)
		pids := b.pids("api", 4)
		b.must(0, "/", "stop", "api-1")
		if s := b.show("bm2@api-1.service", "ActiveState"); s != "inactive" {
			t.Errorf("api-1 is %s after bm2 stop api-1", s)
		}
		rows := b.listJSON("api")
		if rows[1].State != "stopped" || rows[0].State != "online" || rows[1].Reuseport != nil {
			t.Errorf("after stop api-1: %+v", rows)
		}
		r := b.must(0, "/", "start", "api-1")
		if !strings.Contains(r.stdout, "api-1 confirmed (reusePort)\n") || !strings.HasSuffix(r.stdout, "api-1 online and confirmed\n") {
			t.Errorf("bm2 start api-1:\n%s", r.stdout)
		}
		r = b.must(0, "/", "restart", "api-2")
		if !strings.HasSuffix(r.stdout, "api-2 online and confirmed\n") {
			t.Errorf("bm2 restart api-2:\n%s", r.stdout)
		}
		now := b.pids("api", 4)
		if now[0] != pids[0] || now[3] != pids[3] || now[1] == pids[1] || now[2] == pids[2] {
			t.Errorf("pids %v, were %v: only api-1 and api-2 should have changed", now, pids)
		}

		r = b.must(0, "/", "stop", "api")
		if r.stdout != "api stopped (4 instances)\n" {
			t.Errorf("bm2 stop api: %q", r.stdout)
		}
		for _, row := range b.listJSON("api") {
			if row.State != "stopped" {
				t.Errorf("after stop: %+v", row)
			}
		}
		b.must(0, "/", "start", "api")
		b.must(0, "/", "restart", "api")
		b.confirmedNow("api", 4)
		for _, row := range b.listJSON("api") {
			if row.State != "online" || row.Reuseport == nil || *row.Reuseport != "confirmed" {
				t.Errorf("after restart: %+v", row)
			}
		}
		b.must(4, "/", "stop", "api-7")
		b.must(4, "/", "start", "nope")
	})

	t.Run("delete leaves nothing behind", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/", "delete", "api")
		if !strings.HasPrefix(r.stdout, "deleted api: stopped 4 instances, removed /etc/bm2/api.toml") {
			t.Errorf("bm2 delete: %q", r.stdout)
		}
		b.sh(`test ! -e /etc/bm2/api.toml && test ! -e /var/lib/bm2/errored/api`)
		if out := b.sh(`systemctl list-units --all --no-legend --plain 'bm2@api-*' 'bm2-probe@api-*' bm2-api.target bm2-api.slice`); strings.TrimSpace(out) != "" {
			t.Errorf("units left:\n%s", out)
		}
		// systemd loads a slice without a unit file on demand; the file is
		// what must be gone.
		if s := b.show("bm2-api.slice", "FragmentPath"); s != "" {
			t.Errorf("bm2-api.slice still has a unit file: %s", s)
		}
		if out, err := b.try(`curl -s --max-time 2 http://127.0.0.1:3000/`); err == nil {
			t.Errorf("port 3000 still answers: %q", out)
		}
		r = b.must(0, "/", "list")
		if !strings.Contains(r.stderr, "no projects registered") {
			t.Errorf("bm2 list after delete:\n%s\n%s", r.stdout, r.stderr)
		}
		b.must(4, "/", "delete", "api")
	})
}

// A project whose app does not listen with reusePort: serve says why and
// what to do, the project ends errored and bm2 list shows the reason;
// fixed, serve brings it back confirmed. A conflicting serve writes
// nothing.
func TestCLIErrored(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/solo", "node-server.js", "server.js")
	solo := `name = "solo"
script = "server.js"
runtime = "node"
instances = 2
port = 3100
stop_timeout_ms = 1000
`
	b.write("/srv/solo/bm2.toml", solo+"\n[env]\nREUSE_PORT = \"0\"\n")

	t.Run("serve without reusePort ends errored", func(t *testing.T) {
		b := b.in(t)
		r := b.must(1, "/srv/solo", "serve")
		for _, want := range []string{
			"bm2: solo is errored: reuseport_missing: solo-",
			"holds port 3100 alone (no SO_REUSEPORT): cluster mode needs every instance to share the port, so bm2 stopped solo",
			"bm2: fix: set `reuseport = \"preload\"` in bm2.toml: bm2 adds reusePort: true to the app's listen",
			"or listen with `server.listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true })`",
			"or set `exec_mode = \"fork\"` in bm2.toml; then `bm2 serve`",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("serve's error lacks %q:\n%s", want, r.stderr)
			}
		}
		// The last log lines of the instance whose probe saw it. What the
		// app itself said (listening without reusePort, or EADDRINUSE) is
		// there only when it got to say it before the stop: the probe may
		// judge the port as soon as it is bound.
		if !strings.Contains(r.stderr, "last lines of its log (journalctl -u bm2@solo-") {
			t.Errorf("serve's error shows no log of the instance:\n%s", r.stderr)
		}
		t.Logf("bm2 serve (no reusePort):\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		b.sh(`test "$(cat /var/lib/bm2/errored/solo)" = reuseport_missing`)
		for _, row := range b.listJSON("solo") {
			if row.State != "errored" || row.Reason != "reuseport_missing" || row.Reuseport == nil || *row.Reuseport != "missing" {
				t.Errorf("bm2 list --json: %+v", row)
			}
		}
		// The stop of the slice the probe asked for may still be under
		// way (a pid in the row) when serve returns: errored at once, the
		// process gone once the stop is done.
		b.eventually(10*time.Second, "bm2 list shows solo-1 errored and stopped",
			`bm2 list solo; bm2 list solo | grep -Eq '^solo +1 +cluster +errored +reuseport_missing +- +3100 +missing '`)
		r = b.must(0, "/", "events", "solo", "--json")
		if !strings.Contains(r.stdout, `"event":"reuseport_missing"`) || !strings.Contains(r.stdout, `"reason":"reuseport_missing"`) ||
			!strings.Contains(r.stdout, `"level":"error"`) || !strings.Contains(r.stdout, `cluster mode needs reusePort`) {
			t.Errorf("bm2 events solo --json:\n%s", r.stdout)
		}
		b.must(1, "/", "reload", "solo") // nothing runs
		// The probe that stopped the project is stopped with it (PartOf=)
		// and sees its reaction through: every probe ends cleanly, at once,
		// and the project's slice is down.
		b.eventually(10*time.Second, "solo's probes ended cleanly and its slice is down",
			`for u in bm2-probe@solo-0.service bm2-probe@solo-1.service bm2-solo.slice; do test "$(systemctl show -P ActiveState $u)" = inactive || exit 1; done`)
		if out := b.sh(`journalctl --no-pager -o cat -u 'bm2-probe@solo-*' | grep -F 'bm2-probe:' || true`); out != "" {
			t.Errorf("a probe reported an error:\n%s", out)
		}
	})

	t.Run("fixed, serve clears the errored state and runs confirmed", func(t *testing.T) {
		b := b.in(t)
		b.write("/srv/solo/bm2.toml", solo)
		r := b.must(0, "/srv/solo", "serve")
		for _, want := range []string{"updated /etc/bm2/solo.toml", "cleared errored state of solo (was: reuseport_missing)\n",
			"solo-0 confirmed (reusePort)\n", "solo-1 confirmed (reusePort)\n", "solo online and confirmed: 2 x cluster on port 3100"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("serve's output lacks %q:\n%s", want, r.stdout)
			}
		}
		b.sh(`test ! -e /var/lib/bm2/errored/solo`)
		b.confirmedNow("solo", 2)
		for _, row := range b.listJSON("solo") {
			if row.State != "online" || row.Reason != "" || row.Reuseport == nil || *row.Reuseport != "confirmed" {
				t.Errorf("bm2 list --json: %+v", row)
			}
		}
	})

	t.Run("a conflicting serve writes nothing", func(t *testing.T) {
		b := b.in(t)
		b.app("/srv/fork", "node-server.js", "server.js")
		b.write("/srv/fork/bm2.toml", "name = \"api\"\nscript = \"server.js\"\nexec_mode = \"fork\"\ninstances = 4\nport = 3000\n")
		r := b.must(0, "/srv/fork", "serve")
		if !strings.Contains(r.stdout, "api online: 4 x fork on port 3000~3003") || strings.Contains(r.stdout, "confirmed") {
			t.Errorf("serve of a fork project:\n%s", r.stdout)
		}
		b.app("/srv/web", "node-server.js", "server.js")
		b.write("/srv/web/bm2.toml", "name = \"web\"\nscript = \"server.js\"\nport = 3000\n")
		r = b.must(3, "/srv/web", "serve")
		if !strings.HasPrefix(r.stderr, "bm2: port conflict: web port range 3000~3000 overlaps api 3000~3003\n") {
			t.Errorf("conflicting serve:\n%s", r.stderr)
		}
		b.sh(`test ! -e /etc/bm2/web.toml`)
		if s := b.show("bm2-web.target", "LoadState"); s != "not-found" {
			t.Errorf("bm2-web.target is %s", s)
		}
	})
}

// restartedAll asserts that every instance of a project runs a new
// process since before (its pids, as pids returned them).
func (b *bed) restartedAll(project string, before []string) {
	b.t.Helper()
	after := b.pids(project, len(before))
	for i := range after {
		if after[i] == before[i] {
			b.t.Errorf("%s-%d was not restarted (pid %s)", project, i, after[i])
		}
	}
}
