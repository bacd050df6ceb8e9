package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// asUser runs a shell script as a user who logged in (su -l: PAM, logind,
// $XDG_RUNTIME_DIR), as a person at a terminal would.
func (b *bed) asUser(user, script string) run {
	b.t.Helper()
	path := fmt.Sprintf("/tmp/%s-%d.sh", user, time.Now().UnixNano())
	// Not b.write: its install -d would make /tmp 0755, and a user's
	// services with PrivateTmp= would no longer start.
	if err := b.WriteFile(path, []byte(script), 0o644); err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return b.execRun(ctx, "as "+user+": "+script, "su", "-l", user, "-c", "bash "+path)
}

// mustAs is asUser that fails the test unless the script exits with want.
func (b *bed) mustAs(want int, user, script string) run {
	b.t.Helper()
	r := b.asUser(user, script)
	if r.code != want {
		// What the user's manager said, from its start.
		log, _ := b.try(fmt.Sprintf(`journalctl -b --no-pager -o short-monotonic _UID=$(id -u %s) | grep -v ' bm2-probe\[' | tail -40; ls -la /home/%s`, user, user))
		b.t.Fatalf("as %s: %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s\n%s's journal:\n%s", user, script, r.code, want, r.stdout, r.stderr, user, log)
	}
	return r
}

// userListJSON is `bm2 list --json` as a user.
func (b *bed) userListJSON(user string) []listRow {
	b.t.Helper()
	r := b.mustAs(0, user, "bm2 list --json")
	var rows []struct {
		listRow
		Scope string `json:"scope"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		b.t.Fatalf("bm2 list --json as %s: %v\n%s", user, err, r.stdout)
	}
	out := make([]listRow, len(rows))
	for i, row := range rows {
		if row.Scope != "user" {
			b.t.Errorf("as %s, %s says scope %q, want user", user, row.Unit, row.Scope)
		}
		out[i] = row.listRow
	}
	return out
}

const userNodeApp = `const http = require("node:http");
const port = Number(process.env.BM2_APP_PORT);
const reusePort = process.env.REUSE !== "0";
http.createServer((q, r) => r.end(process.env.BM2_APP_NAME + " " + process.env.BM2_APP_INSTANCE + " " + process.getuid() + "\n"))
  .listen({ port, reusePort }, () => console.log("user app listening on " + port + " as uid " + process.getuid()));
`

// bm2 run by a normal user, without sudo: the user's own systemd runs the
// projects (user scope), next to a system project that nothing touches.
func TestUserScope(t *testing.T) {
	b := newBed(t)

	// A system project, served by root, that stays online throughout.
	b.app("/srv/sys", "node-server.js", "server.js")
	b.write("/srv/sys/bm2.toml", "name = \"sys\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 8200\n")
	b.must(0, "/srv/sys", "serve")
	sysPIDs := b.pids("sys", 2)

	b.sh(`set -e
useradd -m -s /bin/bash alice
useradd -m -s /bin/bash bob
loginctl enable-linger alice bob`)
	aliceUID := strings.TrimSpace(b.sh("id -u alice"))
	b.eventually(30*time.Second, "alice's and bob's managers", fmt.Sprintf(
		`systemctl is-active user@%s.service && systemctl is-active user@$(id -u bob).service && test -S /run/user/%s/systemd/private`, aliceUID, aliceUID))

	t.Run("user generator environment", func(t *testing.T) {
		b := b.in(t)
		// What systemd 252 gives a user generator: the manager's
		// environment. bm2-generator takes the home from the password
		// database and needs none of it.
		b.write("/usr/lib/systemd/user-generators/zz-env", "#!/bin/sh\nenv > \"$XDG_RUNTIME_DIR/generator-env\"\n")
		b.sh("chmod 0755 /usr/lib/systemd/user-generators/zz-env")
		b.mustAs(0, "alice", "systemctl --user daemon-reload")
		env := b.mustAs(0, "alice", `cat "$XDG_RUNTIME_DIR/generator-env"`).stdout
		b.sh("rm /usr/lib/systemd/user-generators/zz-env")
		for _, want := range []string{"HOME=/home/alice", "SYSTEMD_SCOPE=user", "XDG_RUNTIME_DIR=/run/user/" + aliceUID, "USER=alice"} {
			if !strings.Contains(env, want+"\n") {
				t.Errorf("a user generator's environment has no %s:\n%s", want, env)
			}
		}
		if strings.Contains(env, "XDG_CONFIG_HOME=") {
			t.Errorf("XDG_CONFIG_HOME is set for user generators now (docs say it is not):\n%s", env)
		}
	})

	// Alice's projects: Bun in cluster mode, Node in fork mode.
	b.app("/home/alice/web", "graceful-bun.ts", "index.ts")
	b.write("/home/alice/web/bm2.toml", "name = \"web\"\nscript = \"index.ts\"\ninstances = 2\nport = 8300\n")
	b.write("/home/alice/fk/server.js", userNodeApp)
	b.write("/home/alice/fk/bm2.toml", "name = \"fk\"\nscript = \"server.js\"\nexec_mode = \"fork\"\ninstances = 2\nport = 8310\n")
	// Bob has a project of the same name: what alice reads is hers alone.
	b.write("/home/bob/web/server.js", userNodeApp)
	b.write("/home/bob/web/bm2.toml", "name = \"web\"\nscript = \"server.js\"\nport = 8320\n")
	b.sh("chown -R alice: /home/alice && chown -R bob: /home/bob")

	out := b.mustAs(0, "alice", "cd ~/web && bm2 serve")
	for _, want := range []string{"registered ~/.bm2/projects/web.toml in user scope (alice's own systemd: root's `bm2 list` does not show it; `sudo bm2 serve` registers it for the system)",
		"web online and confirmed", "lingering is on for alice"} {
		if !strings.Contains(out.stdout, want) {
			t.Errorf("serve as alice does not say %q:\n%s", want, out.stdout)
		}
	}
	b.mustAs(0, "alice", "cd ~/fk && bm2 serve")
	b.mustAs(0, "bob", "cd ~/web && bm2 serve")
	for port, want := range map[int]string{8300: "web ", 8310: "fk 0 " + aliceUID, 8311: "fk 1 " + aliceUID} {
		if got := b.sh(fmt.Sprintf("curl -sf http://127.0.0.1:%d/", port)); !strings.HasPrefix(got, want) {
			t.Errorf("port %d answers %q, want %q…", port, got, want)
		}
	}

	t.Run("list, logs and events are alice's own", func(t *testing.T) {
		b := b.in(t)
		// Even for a member of systemd-journal, who may read bob's entries.
		b.sh("usermod -aG systemd-journal alice")
		defer b.sh("gpasswd -d alice systemd-journal >/dev/null")
		rows := b.userListJSON("alice")
		got := map[string]string{}
		for _, r := range rows {
			got[r.Unit] = r.State
			if r.Project == "web" && (r.Reuseport == nil || *r.Reuseport != "confirmed") {
				t.Errorf("%s reuseport %v, want confirmed", r.Unit, r.Reuseport)
			}
			if r.Project == "web" && r.Port != 8300 {
				t.Errorf("alice's list shows %s on port %d (bob's web is on 8320)", r.Unit, r.Port)
			}
		}
		for _, u := range []string{"bm2@web-0.service", "bm2@web-1.service", "bm2@fk-0.service", "bm2@fk-1.service"} {
			if got[u] != "online" {
				t.Errorf("%s is %q, want online (list: %v)", u, got[u], got)
			}
		}
		if len(rows) != 4 {
			t.Errorf("alice's list has %d rows, want her 4 (no system or bob's rows): %v", len(rows), got)
		}
		list := b.mustAs(0, "alice", "bm2 list")
		if !strings.Contains(list.stderr, "bm2 --system list") {
			t.Errorf("alice's list does not point at the system's projects:\n%s", list.stderr)
		}
		logs := b.mustAs(0, "alice", "bm2 logs fk -n 50").stdout
		if !strings.Contains(logs, "user app listening on 8310 as uid "+aliceUID) || strings.Contains(logs, "8320") {
			t.Errorf("bm2 logs fk as alice:\n%s", logs)
		}
		logs = b.mustAs(0, "alice", "bm2 logs web -n 50").stdout
		if strings.Contains(logs, "8320") || !strings.Contains(logs, "web-0") {
			t.Errorf("bm2 logs web as alice shows bob's lines or none of hers:\n%s", logs)
		}
		events := b.mustAs(0, "alice", "bm2 events web").stdout
		if !strings.Contains(events, "port 8300 is shared") || strings.Contains(events, "8320") {
			t.Errorf("bm2 events web as alice:\n%s", events)
		}
	})

	t.Run("metrics, and why MEM is unknown", func(t *testing.T) {
		b := b.in(t)
		list := b.mustAs(0, "alice", "bm2 list --json; bm2 list >/dev/null")
		if strings.Contains(list.stdout, `"memory_bytes": null`) && !strings.Contains(list.stderr, "unknown in user scope on this host") {
			t.Errorf("alice's list has no MEM and does not say why:\n%s\n%s", list.stdout, list.stderr)
		}
		text := b.mustAs(0, "alice", "bm2 metrics").stdout
		ss := samples(t, text)
		for _, inst := range []string{"web-0", "web-1", "fk-0", "fk-1"} {
			if v, ok := find(ss, "bm2_instance_up", "instance", inst); !ok || v != 1 {
				t.Errorf("alice's metrics: bm2_instance_up{instance=%s} %v (found %v)", inst, v, ok)
			}
		}
		if v, _ := find(ss, "bm2_project_instances", "project", "web"); v != 2 {
			t.Errorf("alice's metrics show %v instances of web (hers has 2, bob's 1)", v)
		}
		b.mustAs(0, "alice", "systemctl --user enable --now bm2-metrics.socket")
		defer b.mustAs(0, "alice", "systemctl --user disable --now bm2-metrics.socket")
		scrape := b.mustAs(0, "alice", "curl -sf --max-time 10 http://127.0.0.1:9616/metrics").stdout
		if _, ok := find(samples(t, scrape), "bm2_instance_up", "instance", "fk-1"); !ok {
			t.Errorf("alice's socket on 9616:\n%s", scrape)
		}
	})

	t.Run("top in user scope", func(t *testing.T) {
		b := b.in(t)
		b.need("tmux", "tmux")
		b.mustAs(0, "alice", `rm -f ~/top.rc; tmux -f /dev/null new-session -d -s top -x 120 -y 20 "env TERM=tmux-256color bm2 top; echo \$? > ~/top.rc"`)
		pane := b.eventually(20*time.Second, "alice's bm2 top shows her instances",
			`p=$(su -l alice -c 'tmux capture-pane -p -t top'); echo "$p"; echo "$p" | grep -q 'user scope' && echo "$p" | grep -Eq '^[> ]*fk +1 +online'`)
		if strings.Contains(pane, "8320") || strings.Contains(pane, "sys ") {
			t.Errorf("alice's top shows what is not hers:\n%s", pane)
		}
		b.mustAs(0, "alice", "tmux send-keys -t top q")
		b.eventually(10*time.Second, "alice's bm2 top quits on q", `test "$(cat /home/alice/top.rc 2>/dev/null)" = 0`)
	})

	t.Run("stop, start, restart, status", func(t *testing.T) {
		b := b.in(t)
		b.mustAs(0, "alice", "bm2 stop fk")
		b.sh("! curl -sf --max-time 2 http://127.0.0.1:8310/")
		if out := b.mustAs(0, "alice", "bm2 start fk").stdout; !strings.Contains(out, "fk online") {
			t.Errorf("start fk as alice:\n%s", out)
		}
		b.mustAs(0, "alice", "bm2 restart fk-1")
		st := b.mustAs(0, "alice", "bm2 status web").stdout
		for _, want := range []string{"/home/alice/.bm2/projects/web.toml", "user alice (user scope", "systemctl --user status bm2-web.target", "confirmed"} {
			if !strings.Contains(st, want) {
				t.Errorf("status web as alice lacks %q:\n%s", want, st)
			}
		}
		b.sh("curl -sf http://127.0.0.1:8310/ && curl -sf http://127.0.0.1:8311/")
	})

	t.Run("reload drops nothing", func(t *testing.T) {
		b := b.in(t)
		res, out, took := b.reloadCmdUnderLoad("su -l alice -c 'bm2 reload web'", 8300, true)
		t.Logf("user-scope reload of 2 Bun instances: %v, reload %v\n%s", res, took, out)
		if res.errors() != 0 || res.requests == 0 {
			t.Errorf("reload as alice: %v\n%s", res, out)
		}
	})

	t.Run("no reusePort: errored, crash.log in ~/.bm2", func(t *testing.T) {
		b := b.in(t)
		b.write("/home/alice/bad/server.js", userNodeApp)
		b.write("/home/alice/bad/bm2.toml", "name = \"bad\"\nscript = \"server.js\"\ninstances = 2\nport = 8330\n\n[env]\nREUSE = \"0\"\n")
		b.sh("chown -R alice: /home/alice/bad")
		r := b.mustAs(1, "alice", "cd ~/bad && bm2 serve")
		if !strings.Contains(r.stderr, "reuseport_missing") {
			t.Errorf("serve of an app without reusePort:\n%s", r.stderr)
		}
		b.eventually(30*time.Second, "crash.log at the seed's path", `grep -q reason=reuseport_missing /home/alice/.bm2/bad/logs/bad-0.crash.log && test "$(stat -c %U /home/alice/.bm2/bad/logs/bad-0.crash.log)" = alice`)
		for _, row := range b.userListJSON("alice") {
			if row.Project == "bad" && (row.State != "errored" || row.Reason != "reuseport_missing") {
				t.Errorf("%s: %s %s, want errored reuseport_missing", row.Unit, row.State, row.Reason)
			}
		}
	})

	t.Run("notifications from the user's own manager", func(t *testing.T) {
		b := b.in(t)
		b.app("/srv/hook", "webhook.js", "webhook.js")
		b.sh(`systemd-run -q --unit=userhook -p Environment=OUT=/tmp/userhook.jsonl -p Environment=PORT=9301 /usr/local/bin/node /srv/hook/webhook.js`)
		b.eventually(10*time.Second, "receiver up", `curl -s -o /dev/null -X POST http://127.0.0.1:9301/ && rm -f /tmp/userhook.jsonl`)
		b.write("/home/alice/crashy/server.js", "setTimeout(() => process.exit(3), 50);\n")
		b.write("/home/alice/crashy/bm2.toml", "name = \"crashy\"\nscript = \"server.js\"\nexec_mode = \"fork\"\nport = 8350\nmax_restarts = 1\n\n[notify]\nwebhook = \"http://127.0.0.1:9301/hook?token=s3cret\"\nallow_local = true\n")
		b.sh("chown -R alice: /home/alice/crashy")
		b.mustAs(1, "alice", "cd ~/crashy && bm2 serve --timeout 30s")
		b.sh("test \"$(stat -c '%U %a' /home/alice/.bm2/projects/private/crashy.toml)\" = 'alice 600'")
		post := b.waitPost("/tmp/userhook.jsonl", "instance_errored", "crashy")
		if post.Body["instance"] != "crashy-0" || post.Body["reason"] != "restart_budget_exhausted" || post.URL != "/hook?token=s3cret" {
			t.Errorf("notification %+v", post)
		}
		// Delivered by the user's own bm2-notify.service, as alice. The
		// receiver has the post before bm2-notify has its answer, and the
		// line (the run's summary, once the spool is empty) takes its way
		// through journald: wait for it, as long as the suite's other
		// journal waits (one full run under load took more than 10 s).
		b.eventually(30*time.Second, "bm2-notify.service logs the delivery", fmt.Sprintf(`journalctl _UID=%s _SYSTEMD_USER_UNIT=bm2-notify.service --no-pager | grep -q delivered`, aliceUID))
		if out := b.sh("journalctl --no-pager -o cat _UID=" + aliceUID); strings.Contains(out, "s3cret") {
			t.Error("the webhook's token is in alice's journal")
		}
		b.mustAs(0, "alice", "bm2 delete crashy")
	})

	t.Run("a refusal is confirmed in the instance's sandbox", func(t *testing.T) {
		b := b.in(t)
		// alice's own runtime, a wrapper that tells whether
		// NoNewPrivileges= held when it answered --version; it turns
		// below the floor after serve. The exit hook, run by alice's
		// manager, asks it through systemd-run --user, never itself.
		rt := func(version string) {
			b.write("/home/alice/rt/node", `#!/bin/sh
nnp=$(awk '/^NoNewPrivs/ {print $2}' /proc/self/status)
[ "$1" = --version ] && { echo "`+version+`-nnp$nnp"; exit 0; }
exec /usr/local/bin/node "$@"
`)
			b.sh("chmod 0755 /home/alice/rt/node && chown -R alice: /home/alice/rt")
		}
		rt("v24.1.0")
		b.write("/home/alice/old/server.js", userNodeApp)
		b.write("/home/alice/old/bm2.toml", "name = \"old\"\nscript = \"server.js\"\nexec_mode = \"fork\"\nport = 8360\nruntime = \"node\"\nruntime_path = \"/home/alice/rt/node\"\n")
		b.sh("chown -R alice: /home/alice/old")
		b.mustAs(0, "alice", "cd ~/old && bm2 serve --timeout 30s")
		rt("v20.0.0")
		b.mustAs(1, "alice", "bm2 restart old --timeout 30s")
		b.eventually(30*time.Second, "the refusal confirmed", `journalctl --no-pager -o cat -t bm2 BM2_EVENT=runtime_rejected BM2_PROJECT=old _UID=`+aliceUID+` | grep -q 'v20.0.0-nnp1, below the floor'`)
		if out := b.sh(`journalctl --no-pager -o cat -t bm2 BM2_PROJECT=old _UID=` + aliceUID); strings.Contains(out, "unconfirmed") || strings.Contains(out, "nnp0") {
			t.Errorf("the refusal was not confirmed in the sandbox:\n%s", out)
		}
		b.mustAs(0, "alice", "bm2 delete old")
	})

	t.Run("another user's listener", func(t *testing.T) {
		b := b.in(t)
		// Bob listens on 8340 with reusePort: SO_REUSEPORT joins only
		// sockets of the same user, so alice's app cannot share it. That
		// is a conflict with bob, not a missing reusePort.
		b.write("/srv/bobhog/hog.js", "require('node:http').createServer((q, r) => r.end('bob')).listen({port: 8340, reusePort: true}, () => console.log('bob up'));\n")
		b.sh(`systemd-run -q --unit=bobhog -p User=bob /usr/local/bin/node /srv/bobhog/hog.js`)
		b.eventually(10*time.Second, "bob listens", `curl -sf http://127.0.0.1:8340/`)
		b.write("/home/alice/clash/server.js", userNodeApp)
		b.write("/home/alice/clash/bm2.toml", "name = \"clash\"\nscript = \"server.js\"\nport = 8340\n")
		b.sh("chown -R alice: /home/alice/clash")
		chk := b.mustAs(3, "alice", "cd ~/clash && bm2 check")
		// serve refuses what check found, before writing anything;
		// --force goes ahead, and the instances end port_in_use.
		refused := b.mustAs(3, "alice", "cd ~/clash && bm2 serve --timeout 30s")
		if !strings.Contains(refused.stderr, "port_in_use: port 8340 is held by ") || !strings.Contains(refused.stderr, "`bm2 serve --force` serves it anyway") {
			t.Errorf("serve on bob's port:\n%s", refused.stderr)
		}
		b.sh("test ! -e /home/alice/.bm2/projects/clash.toml")
		r := b.mustAs(1, "alice", "cd ~/clash && bm2 serve --force --timeout 30s")
		all := chk.stdout + chk.stderr + r.stdout + r.stderr
		if strings.Contains(all, "reuseport_missing") || !strings.Contains(all, "port_in_use") || !strings.Contains(all, "(bob)") || !strings.Contains(all, "8340") {
			t.Errorf("alice's app on bob's port:\ncheck:\n%s%s\nserve:\n%s%s", chk.stdout, chk.stderr, r.stdout, r.stderr)
		}
		for _, row := range b.userListJSON("alice") {
			if row.Project == "clash" && row.Reason != "port_in_use" {
				t.Errorf("%s: %s %s, want port_in_use", row.Unit, row.State, row.Reason)
			}
		}
		b.sh("systemctl stop bobhog")
		b.mustAs(0, "alice", "bm2 delete clash")
	})

	t.Run("what user scope refuses", func(t *testing.T) {
		b := b.in(t)
		b.write("/home/alice/low/server.js", userNodeApp)
		b.write("/home/alice/low/bm2.toml", "name = \"low\"\nscript = \"server.js\"\nport = 80\n")
		b.write("/home/alice/near/server.js", userNodeApp)
		b.write("/home/alice/near/bm2.toml", "name = \"near\"\nscript = \"server.js\"\nport = 8200\n")
		b.sh("chown -R alice: /home/alice/low /home/alice/near")
		if r := b.mustAs(3, "alice", "cd ~/low && bm2 serve"); !strings.Contains(r.stderr, "net.ipv4.ip_unprivileged_port_start (1024)") {
			t.Errorf("serve on port 80 as alice:\n%s", r.stderr)
		}
		if r := b.mustAs(3, "alice", "cd ~/near && bm2 serve"); !strings.Contains(r.stderr, "overlaps system project sys 8200~8200") {
			t.Errorf("serve on the system project's port as alice:\n%s", r.stderr)
		}
		b.sh("test ! -e /home/alice/.bm2/projects/low.toml && test ! -e /home/alice/.bm2/projects/near.toml")
	})

	t.Run("without the user bus", func(t *testing.T) {
		b := b.in(t)
		// No dbus-user-session: bm2 talks to systemd's private socket.
		b.mustAs(0, "alice", `systemctl --user mask --now dbus.socket dbus.service >/dev/null 2>&1; rm -f "$XDG_RUNTIME_DIR/bus"; test ! -e "$XDG_RUNTIME_DIR/bus"`)
		r := b.mustAs(0, "alice", "bm2 list --json")
		if !strings.Contains(r.stdout, `"bm2@fk-0.service"`) {
			t.Errorf("list without the user bus:\n%s\n%s", r.stdout, r.stderr)
		}
		b.mustAs(0, "alice", "bm2 restart fk")
		b.mustAs(0, "alice", "systemctl --user unmask dbus.socket dbus.service >/dev/null 2>&1")
	})

	t.Run("survives a restart of the user manager", func(t *testing.T) {
		b := b.in(t)
		b.sh("systemctl restart user@" + aliceUID + ".service")
		b.eventually(60*time.Second, "alice's projects back", `su -l alice -c 'bm2 list --json' | python3 -c '
import json,sys
rows = {r["unit"]: r for r in json.load(sys.stdin)}
for u in ("bm2@web-0.service", "bm2@web-1.service", "bm2@fk-0.service", "bm2@fk-1.service"):
    assert rows[u]["state"] == "online", (u, rows[u]["state"])
for u in ("bm2@bad-0.service", "bm2@bad-1.service"):
    assert rows[u]["state"] == "errored" and rows[u]["reason"] == "reuseport_missing", rows[u]
' && curl -sf http://127.0.0.1:8300/ && curl -sf http://127.0.0.1:8311/`)
	})

	t.Run("startup and lingering", func(t *testing.T) {
		b := b.in(t)
		if r := b.mustAs(0, "alice", "bm2 startup"); !strings.Contains(r.stdout, "lingering is on for alice already") {
			t.Errorf("bm2 startup with lingering on:\n%s", r.stdout)
		}
		// Without polkitd, logind refuses a user's own request: bm2 says
		// what to install or whom to ask. (The su session keeps bob's
		// manager running meanwhile.)
		b.sh(`loginctl disable-linger bob && systemctl mask --now --runtime polkit.service >/dev/null 2>&1; if [ -e /usr/lib/polkit-1/polkitd ]; then mv /usr/lib/polkit-1/polkitd /usr/lib/polkit-1/polkitd.off; fi`)
		r := b.mustAs(1, "bob", "bm2 startup")
		if !strings.Contains(r.stderr, "polkitd is not installed (sudo apt-get install polkitd)") || !strings.Contains(r.stderr, "sudo loginctl enable-linger bob") {
			t.Errorf("bm2 startup without polkitd:\n%s", r.stderr)
		}
		b.sh(`if [ -e /usr/lib/polkit-1/polkitd.off ]; then mv /usr/lib/polkit-1/polkitd.off /usr/lib/polkit-1/polkitd; fi; systemctl unmask --runtime polkit.service >/dev/null 2>&1; loginctl enable-linger bob`)
	})

	t.Run("delete", func(t *testing.T) {
		b := b.in(t)
		b.mustAs(0, "alice", "bm2 delete fk")
		b.sh("test ! -e /home/alice/.bm2/projects/fk.toml && ! curl -sf http://127.0.0.1:8310/")
		for _, row := range b.userListJSON("alice") {
			if row.Project == "fk" {
				t.Errorf("fk still listed after delete: %+v", row)
			}
		}
		// Bob's project of the same name as alice's is untouched.
		b.sh("curl -sf http://127.0.0.1:8320/")
	})

	t.Run("volatile journal", func(t *testing.T) {
		b := b.in(t)
		// Debian's default is persistent (/var/log/journal exists); without
		// it, a user's entries are in the system journal, which alice may
		// not read: bm2 says so and what to do.
		b.sh("rm -rf /var/log/journal && systemctl restart systemd-journald")
		r := b.mustAs(1, "alice", "bm2 logs web")
		if !strings.Contains(r.stderr, "keeps its journal in memory only") || !strings.Contains(r.stderr, "sudo mkdir -p /var/log/journal") {
			t.Errorf("bm2 logs on a volatile journal:\n%s", r.stderr)
		}
	})

	// The system project saw none of it.
	if got := b.pids("sys", 2); strings.Join(got, " ") != strings.Join(sysPIDs, " ") {
		t.Errorf("the system project's instances were restarted: %v, then %v", sysPIDs, got)
	}
	rows := b.listJSON()
	if len(rows) != 2 || rows[0].Project != "sys" || rows[0].State != "online" || rows[1].State != "online" {
		t.Errorf("root's list after all of it: %+v", rows)
	}
}
