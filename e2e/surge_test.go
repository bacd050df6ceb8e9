package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// One instance, reloaded under load: the surge instance serves while it
// restarts, so not one request fails. With a new connection per request the
// app is a plain Express 5 app whose only shutdown code is server.close()
// on SIGTERM; with keep-alive connections it is docs/reload.md's handler
// ("Connection: close", then close), since server.close() also closes idle
// keep-alive connections at once, racing requests already on their way, in
// whatever process manager (make bench's figure reloadmatrix measures that
// case).
func TestReloadOneInstance(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	mods := b.frameworks()
	b.app("/srv/one", "express-server.js", "server.js")
	b.app("/srv/one", "graceful-server.js", "graceful.js")
	b.sh(fmt.Sprintf(`ln -s %s /srv/one/node_modules`, mods))
	toml := "name = \"one\"\nscript = %q\nruntime = \"node\"\ninstances = 1\nport = 3400\n"
	b.write("/srv/one/bm2.toml", fmt.Sprintf(toml, "server.js"))
	b.must(0, "/srv/one", "serve")
	b.eventually(10*time.Second, "one answers", `curl -sf --max-time 2 http://127.0.0.1:3400/`)
	cases := []struct {
		name, script string
		keepAlive    bool
	}{
		{"express, connection close", "server.js", false},
		{"graceful, keep-alive", "graceful.js", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := b.in(t)
			b.write("/srv/one/bm2.toml", fmt.Sprintf(toml, c.script))
			b.must(0, "/srv/one", "serve") // a changed file: a rolling restart, as reload does
			before := b.pids("one", 1)
			res, out, _ := b.reloadUnderLoad("one", 3400, c.keepAlive)
			if res.errors() != 0 {
				t.Errorf("%v during the reload; reload said:\n%s", res, out)
			}
			if res.requests < 1000 {
				t.Errorf("only %d requests: the load was not steady", res.requests)
			}
			for _, re := range []string{
				`(?m)^one-surge starting… online, listening, confirmed \(\d+\.\ds\)$`,
				`(?m)^one-0 restarting… online, listening, confirmed \(\d+\.\ds\)$`,
				`(?m)^one-surge retired$`,
			} {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("reload's output lacks %s:\n%s", re, out)
				}
			}
			if after := b.pids("one", 1); after[0] == before[0] {
				t.Errorf("one-0 was not restarted (pid %s)", after[0])
			}
			// The reload retires the surge without waiting for its stop
			// (a drain, then SIGTERM), which systemd finishes.
			b.eventually(10*time.Second, "the surge stopped after the reload",
				`st=$(systemctl show -P ActiveState bm2@one-surge.service); echo "$st"; test "$st" = inactive`)
			// The probe's verdict on the restarted run, in its file too.
			inv := b.show("bm2@one-0.service", "InvocationID")
			if v := b.sh(`cat /run/bm2/verdicts/one-0; stat -c '%U %a' /run/bm2/verdicts /run/bm2/verdicts/one-0`); !strings.Contains(v, `"BM2_INVOCATION":"`+inv+`"`) ||
				!strings.Contains(v, `"BM2_EVENT":"reuseport_confirmed"`) || !strings.Contains(v, "root 700\nroot 600") {
				t.Errorf("verdict file of one-0 (run %s):\n%s", inv, v)
			}
			if rows := b.listJSON("one"); len(rows) != 1 {
				t.Errorf("bm2 list after the reload: %+v", rows)
			}
		})
	}
}

// The surge is one more instance of the project, with what the others
// have and an instance number none of them has; a reload killed with
// SIGKILL leaves it serving, bm2 list shows it, and the next command on the
// project retires it.
func TestReloadInterrupted(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/api", "env-server.js", "server.js")
	b.write("/srv/api/bm2.toml", "name = \"api\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3410\n[env]\nGREETING = \"hi\"\n")
	b.must(0, "/srv/api", "serve")
	// A slow instance restart: hold api-0's restart so the reload can be
	// killed while the surge serves in its place.
	b.write("/etc/systemd/system/bm2@api-0.service.d/90-slow.conf", "[Service]\nExecStartPre=/bin/sleep 3\n")
	b.sh(`systemctl daemon-reload`)
	b.sh(`bm2 reload api >/tmp/reload.out 2>&1 & echo $! >/tmp/reload.pid`)
	b.eventually(60*time.Second, "the surge confirmed and api-0 restarting", `grep -q 'api-0 restarting' /tmp/reload.out`)
	b.sh(`kill -KILL $(cat /tmp/reload.pid)`)

	// Two instances' worth still serve: the surge and api-1.
	env := b.appEnvOf("bm2@api-surge.service")
	if env["BM2_APP_INSTANCE"] != "2" || env["BM2_APP_SURGE"] != "1" || env["GREETING"] != "hi" || env["BM2_APP_PORT"] != "3410" {
		t.Errorf("surge environment: %v", env)
	}
	if u0, us := b.show("bm2@api-0.service", "User"), b.show("bm2@api-surge.service", "User"); u0 != us {
		t.Errorf("surge runs as %q, api-0 as %q", us, u0)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(b.sh(`bm2 list --json api`)), &rows); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if r["surge"] == true && r["state"] == "online" {
			found = true
		}
	}
	if !found {
		t.Errorf("bm2 list --json does not show the surge: %v", rows)
	}
	if out := b.sh(`bm2 list api`); !regexp.MustCompile(`(?m)^api +surge +cluster +online`).MatchString(out) {
		t.Errorf("bm2 list:\n%s", out)
	}
	b.eventually(30*time.Second, "api-0 back", `test "$(systemctl show -P SubState bm2@api-0.service)" = running`)
	// bm2 status says so and changes nothing; bm2 start retires it once
	// the instances are online.
	r := b.must(0, "/", "status", "api")
	if !strings.Contains(r.stdout, "api-surge runs") || !strings.Contains(r.stdout, "left by a reload that did not finish") {
		t.Errorf("bm2 status does not report the surge:\n%s", r.stdout)
	}
	if st := b.show("bm2@api-surge.service", "ActiveState"); st != "active" {
		t.Errorf("bm2 status changed the surge: %s", st)
	}
	r = b.must(0, "/", "start", "api")
	if !strings.Contains(r.stdout, "retired api-surge, left running by an interrupted bm2 reload") {
		t.Errorf("bm2 start did not retire the surge:\n%s", r.stdout)
	}
	if st := b.show("bm2@api-surge.service", "ActiveState"); st != "inactive" {
		t.Errorf("surge is %s", st)
	}
	b.sh(`rm -r /etc/systemd/system/bm2@api-0.service.d && systemctl daemon-reload`)

	// A new version that does not start: the surge fails first and no
	// instance is touched.
	pids := b.pids("api", 2)
	b.write("/srv/api/server.js", "process.exit(3)\n")
	r = b.must(1, "/", "reload", "api")
	if !strings.Contains(r.stderr, "reload stopped before any instance was touched") {
		t.Errorf("reload of a broken version:\n%s\n%s", r.stdout, r.stderr)
	}
	if now := b.pids("api", 2); now[0] != pids[0] || now[1] != pids[1] {
		t.Errorf("instances restarted by a reload whose surge failed: %v -> %v", pids, now)
	}
	if st := b.show("bm2@api-surge.service", "ActiveState"); st != "inactive" {
		t.Errorf("surge is %s after a failed reload", st)
	}
}

// appEnvOf is the environment of a unit's main process.
func (b *bed) appEnvOf(unit string) map[string]string {
	b.t.Helper()
	out := b.sh(fmt.Sprintf(`tr '\0' '\n' </proc/$(systemctl show -P MainPID %s)/environ`, unit))
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}
