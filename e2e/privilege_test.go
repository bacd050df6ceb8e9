package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/runtimes"
)

// evilLib is a shared library that, loaded into a process running as root,
// leaves a marker file: the proof that a loader variable reached root.
const evilLib = `#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void) {
	if (geteuid() == 0) {
		FILE *f = fopen("/evil-root-marker", "a");
		if (f) { fprintf(f, "loaded as root into pid %d\n", getpid()); fclose(f); }
	}
}
unsigned int la_version(unsigned int v) { return v; } /* LD_AUDIT's entry point */
`

// hostile are the loader and trust variables an app's user puts wherever
// bm2 might read them.
var hostile = []string{
	"LD_PRELOAD=/srv/evil/evil.so",
	"LD_LIBRARY_PATH=/srv/evil",
	"LD_AUDIT=/srv/evil/evil.so",
	"GODEBUG=madvdontneed=1,panicnil=1",
	"DBUS_SYSTEM_BUS_ADDRESS=unix:path=/srv/evil/bus",
	"HTTPS_PROXY=http://127.0.0.1:9",
	"SSL_CERT_FILE=/srv/evil/cert.pem",
	"SERVICE_RESULT=success",
}

// appEnv asks an env-server.js instance for variables.
func (b *bed) appEnv(port int, keys ...string) map[string]string {
	b.t.Helper()
	out := b.eventually(20*time.Second, fmt.Sprintf("app on %d answers", port),
		fmt.Sprintf(`curl -sf --max-time 2 'http://127.0.0.1:%d/env?keys=%s'`, port, strings.Join(keys, ",")))
	var m map[string]string
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		b.t.Fatalf("%q: %v", out, err)
	}
	return m
}

// noRootMarker fails the test if any root process loaded the library.
func (b *bed) noRootMarker() {
	b.t.Helper()
	if out, err := b.try(`cat /evil-root-marker`); err == nil {
		b.t.Fatalf("a root process loaded the app user's library:\n%s", out)
	}
}

// The line between an app's user and root, tried the way the app's user
// would try it (see issue "Privilege boundary"): loader and trust variables
// in env_file and [env], symlinked env_files, a runtime the user can
// replace, forged events, another project's processes, and secrets read as
// an unrelated user.
func TestPrivilegeBoundary(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.sh(`set -e
useradd -m -s /bin/sh appuser
mkdir -p /srv/evil`)
	b.write("/srv/evil/evil.c", evilLib)
	b.sh(`set -e
gcc -shared -fPIC -o /srv/evil/evil.so /srv/evil/evil.c
touch /srv/evil/cert.pem`)
	// The library works: loaded by a root process, it leaves the marker
	// (so its absence later means something). Then it is removed again.
	b.sh(`LD_PRELOAD=/srv/evil/evil.so /bin/true && test -s /evil-root-marker && rm /evil-root-marker`)

	b.app("/srv/evil", "env-server.js", "server.js")
	b.write("/srv/evil/.env", strings.Join(hostile, "\n")+"\nAPP_OWN=from-env-file\n")
	var envTable []string
	for _, kv := range hostile {
		k, v, _ := strings.Cut(kv, "=")
		envTable = append(envTable, fmt.Sprintf("%s = %q", k, v))
	}
	b.sh(`chown -R appuser: /srv/evil && chmod 0600 /srv/evil/.env`)
	b.write("/etc/bm2/evil.toml", fmt.Sprintf(`name = "evil"
script = "server.js"
cwd = "/srv/evil"
runtime = "node"
instances = 2
port = 3300
user = "appuser"
env_file = ".env"
max_restarts = 2

[env]
APP_SECRET = "in-env"
%s
`, strings.Join(envTable, "\n")))
	b.sh(`systemctl daemon-reload && systemctl start bm2-evil.target`)
	b.waitEvents(30*time.Second, "reuseport_confirmed", "evil", 2)

	t.Run("loader and trust variables reach no root process", func(t *testing.T) {
		b := b.in(t)
		// The app gets its own variables, env_file's included.
		got := b.appEnv(3300, "APP_OWN", "APP_SECRET", "LD_PRELOAD", "SERVICE_RESULT")
		if got["APP_OWN"] != "from-env-file" || got["APP_SECRET"] != "in-env" || got["LD_PRELOAD"] != "/srv/evil/evil.so" {
			t.Errorf("the app's environment: %v", got)
		}
		// A crash runs the root exit hook; it records the truth, not
		// SERVICE_RESULT=success.
		b.sh(`curl -sf --max-time 2 http://127.0.0.1:3300/crash >/dev/null || true`)
		es := b.waitEvents(20*time.Second, "instance_crashed", "evil", 1)
		if e := es[0]; e.str("_UID") != "0" || e.str("BM2_EXIT_STATUS") != "3" || e.str("BM2_SERVICE_RESULT") != "exit-code" {
			t.Errorf("instance_crashed: %v", e)
		}
		if log := b.sh(`cat /var/log/bm2/evil/evil-*.crash.log`); !strings.Contains(log, "reason=exited code=3") {
			t.Errorf("crash.log: %q", log)
		}
		// An app that exits with bm2's refusal status is not believed: the
		// root side checks and finds nothing to refuse.
		b.sh(`curl -sf --max-time 2 http://127.0.0.1:3300/exit78 >/dev/null || true`)
		b.eventually(20*time.Second, "an instance failed with 78",
			`for i in 0 1; do [ "$(systemctl show -P ExecMainStatus bm2@evil-$i.service)" = 78 ] && exit 0; done; exit 1`)
		es = b.waitEvents(20*time.Second, "instance_crashed", "evil", 2)
		if e := es[len(es)-1]; e.str("BM2_EXIT_STATUS") != "78" || !strings.Contains(e.str("MESSAGE"), "found nothing to refuse") {
			t.Errorf("exit 78 of the app itself: %v", e)
		}
		if n := len(b.events("runtime_rejected", "evil")); n != 0 {
			t.Errorf("%d runtime_rejected for an app that exited 78 itself", n)
		}
		// 78 stops the restarts; bm2 start brings it back. bm2's own
		// commands, run as root around the project:
		b.must(0, "/", "start", "evil")
		b.sh(`bm2 status evil >/dev/null; bm2 list >/dev/null; bm2 check evil >/dev/null || true; bm2 reload evil >/dev/null`)
		b.noRootMarker()
	})

	t.Run("an env_file that is a link, or not the app's, is refused", func(t *testing.T) {
		b := b.in(t)
		b.write("/root/secret.env", "STOLEN=root-only\n")
		b.sh(`chmod 0600 /root/secret.env`)
		mk := func(name string, port int, link string) {
			b.app("/srv/"+name, "env-server.js", "server.js")
			b.sh(fmt.Sprintf(`set -e
%s
chown -R appuser: /srv/%s`, link, name))
			b.write("/etc/bm2/"+name+".toml", fmt.Sprintf("name = %q\nscript = \"server.js\"\ncwd = \"/srv/%s\"\nruntime = \"node\"\nport = %d\nuser = \"appuser\"\nenv_file = \".env\"\n", name, name, port))
		}
		mk("sneaky", 3310, `ln -s /root/secret.env /srv/sneaky/.env`)
		mk("sneaky2", 3311, `ln -s /etc/bm2/evil.toml /srv/sneaky2/.env`)
		mk("sneaky3", 3312, `mkdir -p /srv/other && echo STOLEN=nobodys > /srv/other/x.env && ln -s /srv/other /srv/sneaky3/conf`)
		b.sh(`sed -i 's|env_file = ".env"|env_file = "conf/x.env"|' /etc/bm2/sneaky3.toml`)
		mk("sneaky4", 3313, `echo STOLEN=nobodys > /srv/sneaky4/.env && chown nobody: /srv/sneaky4/.env`)
		b.sh(`chown nobody: /srv/sneaky4/.env; systemctl daemon-reload && systemctl start bm2-sneaky.target bm2-sneaky2.target bm2-sneaky3.target bm2-sneaky4.target`)
		for name, want := range map[string]string{
			"sneaky":  "symbolic link",
			"sneaky2": "symbolic link",
			"sneaky3": "symbolic link",
			"sneaky4": "neither root nor the app's user",
		} {
			unit := "bm2@" + name + "-0.service"
			b.eventually(20*time.Second, name+" refused", `test "$(systemctl show -P ActiveState `+unit+`)" = failed`)
			es := b.waitEvents(20*time.Second, "runtime_rejected", name, 1)
			if e := es[0]; e.str("BM2_REASON") != "env_file_refused" || e.str("_UID") != "0" || !strings.Contains(e.str("MESSAGE"), want) {
				t.Errorf("%s: %v", name, e)
			}
			if out := b.sh(`journalctl --no-pager -o cat -u ` + unit); strings.Contains(out, "listening") || strings.Contains(out, "root-only") || strings.Contains(out, "nobodys") {
				t.Errorf("%s started, or its log shows the target's contents:\n%s", name, out)
			}
			if n := b.show(unit, "NRestarts"); n != "0" {
				t.Errorf("%s restarted %s times", name, n)
			}
		}
		b.noRootMarker()
	})

	t.Run("a runtime the app's user owns never runs as root", func(t *testing.T) {
		b := b.in(t)
		// A runtime in the user's home, as Bun installs itself: a wrapper
		// around the real one that would leave a marker if root ran it.
		runtime := func(path, versionLine string) {
			b.write(path, fmt.Sprintf(`#!/bin/sh
[ "$(id -u)" = 0 ] && echo "$0 $*" >> /runtime-root-marker
[ "$1" = --version ] && [ -n %q ] && { echo %q; exit 0; }
exec /usr/local/bin/bun "$@"
`, versionLine, versionLine))
			b.sh(fmt.Sprintf(`chmod 0755 %q && chown -R appuser: /home/appuser/.bun`, path))
		}
		runtime("/home/appuser/.bun/bin/bun", "")
		runtime("/home/appuser/.bun/old/bun", "1.3.0")
		b.app("/home/appuser/site", "bun-reuseport.ts", "index.ts")
		b.write("/home/appuser/site/bm2.toml", "name = \"ownrt\"\nscript = \"index.ts\"\nruntime_path = \"/home/appuser/.bun/bin/bun\"\nuser = \"appuser\"\ninstances = 2\nport = 3320\n")
		b.app("/home/appuser/old", "bun-reuseport.ts", "index.ts")
		b.write("/etc/bm2/oldrt.toml", "name = \"oldrt\"\nscript = \"index.ts\"\ncwd = \"/home/appuser/old\"\nruntime_path = \"/home/appuser/.bun/old/bun\"\nuser = \"appuser\"\nport = 3321\n")
		b.sh(`chown -R appuser: /home/appuser`)
		b.must(0, "/home/appuser/site", "check")
		b.must(0, "/home/appuser/site", "serve")
		b.sh(`systemctl daemon-reload && systemctl start bm2-oldrt.target`)
		b.eventually(20*time.Second, "oldrt refused", `test "$(systemctl show -P ActiveState bm2@oldrt-0.service)" = failed`)
		es := b.waitEvents(20*time.Second, "runtime_rejected", "oldrt", 1)
		if e := es[0]; e.str("BM2_REASON") != "runtime_below_floor" || e.str("_UID") != "0" || !strings.Contains(e.str("MESSAGE"), "Bun 1.3.0, below the floor 1.4.0") {
			t.Errorf("oldrt: %v", e)
		}
		if out, err := b.try(`cat /runtime-root-marker`); err == nil {
			t.Errorf("root ran the user's runtime:\n%s", out)
		}
		// The crash log is root's and appuser's group's, no other app's.
		if got := strings.TrimSpace(b.sh(`stat -c '%a %U %G' /var/log/bm2/oldrt /var/log/bm2/oldrt/oldrt-0.crash.log`)); got != "750 root appuser\n640 root appuser" {
			t.Errorf("crash log of oldrt: %q, want 750 and 640, root:appuser", got)
		}
		if got := b.sh(`curl -sf --max-time 2 http://127.0.0.1:3320/`); !strings.HasPrefix(got, "ownrt ") {
			t.Errorf("ownrt answered %q", got)
		}
	})

	t.Run("only bm2 speaks for bm2", func(t *testing.T) {
		b := b.in(t)
		// A project the probe has not confirmed: it starts listening only
		// after ten minutes.
		b.nodeProject("victim", 1, 3330, `LISTEN_DELAY_MS = "600000"`, "")
		b.sh(`systemctl daemon-reload && systemctl start bm2-victim.target`)
		b.waitActive(20*time.Second, "bm2@victim-0.service")
		inv := b.show("bm2@victim-0.service", "InvocationID")
		fields := strings.Join([]string{"SYSLOG_IDENTIFIER=bm2", "BM2_EVENT=reuseport_confirmed", "BM2_PROJECT=victim",
			"BM2_INSTANCE=victim-0", "BM2_INVOCATION=" + inv, "BM2_LEVEL=info", "PRIORITY=6",
			"MESSAGE_ID=44f30fffb0214cdeb15b218ca0731307", "MESSAGE=victim-0: forged by another project's app"}, "\n")
		if out := b.sh(`curl -sf --max-time 5 'http://127.0.0.1:3300/forge?fields=` + url.QueryEscape(fields) + `'`); strings.TrimSpace(out) != "ok" {
			t.Fatalf("the app could not log: %q", out)
		}
		// The forged entry is in the journal, as the app's user...
		b.eventually(10*time.Second, "forged entry logged", `journalctl --no-pager -o cat -t bm2 BM2_PROJECT=victim | grep -q forged`)
		// ...and bm2 believes none of it.
		for _, r := range b.listJSON("victim") {
			if r.Reuseport == nil || *r.Reuseport != "pending" {
				t.Errorf("bm2 list believed the forgery: %+v", r)
			}
		}
		if r := b.must(0, "/", "events", "victim", "--json"); strings.Contains(r.stdout, "forged") {
			t.Errorf("bm2 events shows the forgery:\n%s", r.stdout)
		}
	})

	t.Run("projects cannot reach each other", func(t *testing.T) {
		b := b.in(t)
		for _, p := range []struct {
			name string
			port int
		}{{"pa", 3340}, {"pb", 3341}} {
			b.app("/srv/"+p.name, "env-server.js", "server.js")
			b.write("/etc/bm2/"+p.name+".toml", fmt.Sprintf("name = %q\nscript = \"server.js\"\ncwd = \"/srv/%s\"\nruntime = \"node\"\nport = %d\n[env]\nSECRET = \"%s-secret\"\n", p.name, p.name, p.port, p.name))
		}
		b.sh(`systemctl daemon-reload && systemctl start bm2-pa.target bm2-pb.target`)
		b.waitActive(20*time.Second, "bm2@pa-0.service", "bm2@pb-0.service")
		uidA, uidB := b.show("bm2@pa-0.service", "UID"), b.show("bm2@pb-0.service", "UID")
		if uidA == uidB || uidA == "0" || uidB == "0" {
			t.Fatalf("pa runs as %s, pb as %s: want two accounts", uidA, uidB)
		}
		if u := b.sh(`ps -o user= -p "$(systemctl show -P MainPID bm2@pa-0.service)"`); strings.TrimSpace(u) != "bm2-pa" {
			t.Errorf("pa runs as %q", u)
		}
		pidB := b.show("bm2@pb-0.service", "MainPID")
		// From inside pa's sandbox: pb is not even visible.
		out := b.eventually(10*time.Second, "pa answers", `curl -sf --max-time 2 http://127.0.0.1:3340/attack?pid=`+pidB)
		var res map[string]string
		json.Unmarshal([]byte(out), &res)
		if res["signal"] == "ok" || res["environ"] == "ok" {
			t.Errorf("pa's app reached pb's process: %v", res)
		}
		// As pa's user anywhere on the host: no signal, no environment, no
		// ptrace, no joining pb's port group.
		as := fmt.Sprintf(`setpriv --reuid=%s --regid=%s --clear-groups `, uidA, uidA)
		for what, script := range map[string]string{
			"signal":  as + `kill -0 ` + pidB,
			"environ": as + `cat /proc/` + pidB + `/environ`,
			"ptrace":  as + `perl -e '$r = syscall(101, 16, ` + pidB + `, 0, 0); exit($r == 0 ? 0 : 1)'`,
			"port":    as + `/usr/local/bin/node -e 'require("net").createServer().listen({port: 3341, reusePort: true}).on("listening", () => process.exit(0)).on("error", () => process.exit(1))'`,
		} {
			if out, err := b.try(script); err == nil {
				t.Errorf("pa's user could %s pb's: %s", what, out)
			}
		}
		// Root still can (the check above would be empty otherwise).
		if out := b.sh(`tr '\0' '\n' < /proc/` + pidB + `/environ`); !strings.Contains(out, "SECRET=pb-secret") {
			t.Errorf("pb's environment as root: %s", out)
		}
	})

	t.Run("secrets stay with root and the app", func(t *testing.T) {
		b := b.in(t)
		// A webhook that redirects every notification elsewhere, and the
		// elsewhere, which must see nothing.
		b.write("/srv/hooks/redirect.js", `require("node:http").createServer((req, res) => {
  require("node:fs").appendFileSync("/srv/hooks/redirect.log", req.method + " " + req.url + "\n");
  res.writeHead(307, { location: "http://127.0.0.2:9201/stolen" + req.url.slice(req.url.indexOf("?")) });
  res.end();
}).listen(9200, "127.0.0.1");
`)
		b.write("/srv/hooks/stolen.js", `require("node:http").createServer((req, res) => {
  require("node:fs").appendFileSync("/srv/hooks/stolen.log", req.method + " " + req.url + "\n"); res.end();
}).listen(9201, "127.0.0.2");
`)
		b.sh(`touch /srv/hooks/redirect.log /srv/hooks/stolen.log
systemd-run --quiet -u hook-redirect /usr/local/bin/node /srv/hooks/redirect.js
systemd-run --quiet -u hook-stolen /usr/local/bin/node /srv/hooks/stolen.js`)
		b.eventually(10*time.Second, "webhook servers up", `curl -s -o /dev/null http://127.0.0.1:9200/ && curl -s -o /dev/null http://127.0.0.2:9201/ && : > /srv/hooks/redirect.log && : > /srv/hooks/stolen.log`)
		const secret, pass, token = "s3cr3t-value-42", "hookpass-42", "tok-42"
		webhook := "http://hookuser:" + pass + "@127.0.0.1:9200/hook?token=" + token
		b.app("/srv/sec", "env-server.js", "server.js")
		b.write("/srv/sec/bm2.toml", fmt.Sprintf("name = \"sec\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3350\n[env]\nAPI_SECRET = %q\n[notify]\nwebhook = %q\nallow_local = true\n", secret, webhook))
		b.sh(`chmod 0600 /srv/sec/bm2.toml`)
		b.must(0, "/srv/sec", "serve")
		if got := b.appEnv(3350, "API_SECRET"); got["API_SECRET"] != secret {
			t.Errorf("the app lost its secret: %v", got)
		}
		// A project whose probe will fail, to make the probe notify.
		b.nodeProject("hooked", 1, 3351, `REUSE_PORT = "0"`, "")
		// The administrator's way: the webhook in the private part.
		b.write("/etc/bm2/private/hooked.toml", fmt.Sprintf("[notify]\nwebhook = %q\n", webhook))
		b.allowLocal("/etc/bm2/hooked.toml") // the receivers are on loopback
		b.sh(`chmod 0600 /etc/bm2/private/hooked.toml && systemctl daemon-reload && systemctl start bm2-hooked.target`)
		b.waitEvents(30*time.Second, "reuseport_missing", "hooked", 1)
		b.eventually(20*time.Second, "the redirector got the notification", `grep -q 'POST /hook?token=' /srv/hooks/redirect.log`)
		// Once the probe that notified has ended, nothing more can arrive.
		b.eventually(60*time.Second, "the probe ended", `! systemctl is-active -q bm2-probe@hooked-0.service`)
		if out, _ := b.try(`cat /srv/hooks/stolen.log`); strings.TrimSpace(out) != "" {
			t.Errorf("the redirect was followed to another host:\n%s", out)
		}
		// Root sees the secret where it must be.
		b.sh(`grep -q ` + secret + ` /etc/bm2/private/sec.toml && test "$(stat -c %a /etc/bm2/private/sec.toml)" = 600`)
		// Nobody else sees it anywhere.
		asNobody := `setpriv --reuid=nobody --regid=nogroup --clear-groups `
		for _, script := range []string{
			`systemctl show bm2@sec-0.service`,
			`systemctl show -p Environment,EnvironmentFiles bm2@sec-0.service`,
			`systemctl cat bm2@sec-0.service`,
			`cat /etc/bm2/sec.toml`,
			`cat /run/systemd/generator/bm2@sec-0.service.d/50-bm2.conf`,
			`cat /etc/bm2/private/sec.toml`,
			`cat /run/systemd/generator/bm2-private/sec.env`,
			`cat /proc/$(systemctl show -P MainPID bm2@sec-0.service)/environ`,
			`bm2 list`,
			`bm2 list --json`,
			`bm2 status sec`,
			`bm2 check sec`,
			`bm2 check /etc/bm2/hooked.toml`,
		} {
			out, _ := b.try(asNobody + script)
			for _, s := range []string{secret, pass, token} {
				if strings.Contains(out, s) {
					t.Errorf("as nobody, %s shows %q:\n%s", script, s, out)
				}
			}
		}
		// What nobody needs still works.
		if out := b.sh(asNobody + `bm2 list`); !strings.Contains(out, "sec      0") {
			t.Errorf("bm2 list as nobody:\n%s", out)
		}
		if out := b.sh(asNobody + `bm2 status sec`); !strings.Contains(out, "1 x cluster on port 3350") {
			t.Errorf("bm2 status as nobody:\n%s", out)
		}
		// Neither root's output nor the journal print the webhook's
		// credentials.
		for _, script := range []string{`bm2 check sec`, `journalctl --no-pager -o verbose`, `cat /var/log/bm2/*/*.crash.log`} {
			out, _ := b.try(script)
			for _, s := range []string{pass, token} {
				if strings.Contains(out, s) {
					t.Errorf("%s shows %q", script, s)
				}
			}
		}
		if out := b.sh(`bm2 check sec || true`); !strings.Contains(out, "notify: webhook http://127.0.0.1:9200/hook?REDACTED (level error)") {
			t.Errorf("bm2 check:\n%s", out)
		}
	})

	t.Run("sandbox scores", func(t *testing.T) {
		b := b.in(t)
		score := func(unit string) float64 {
			out := b.sh(`systemd-analyze security --no-pager ` + unit + ` | tail -1`)
			m := regexp.MustCompile(`exposure level for \S+: ([0-9.]+)`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("%s: %q", unit, out)
			}
			v, _ := strconv.ParseFloat(m[1], 64)
			return v
		}
		// Every unit is scored (score fails the test when systemd-analyze
		// gives no exposure level); the figures are make bench's (figure
		// security).
		score("bm2@evil-0.service")
		score("bm2-failed@pa-0.service")
		def := score("bm2@pa-0.service")
		if def > 2.0 {
			t.Errorf("default project exposure %.1f, want <= 2.0", def)
		}
		if p := score("bm2-probe@pa-0.service"); p > 3.0 {
			t.Errorf("probe exposure %.1f", p)
		}
		notify := score("bm2-notify.service")
		if notify > 2.0 {
			t.Errorf("bm2-notify.service exposure %.1f, want <= 2.0", notify)
		}
		if out := b.sh(`bm2 status pa`); !strings.Contains(out, "sandbox: strict, exposure ") {
			t.Errorf("bm2 status does not show the exposure:\n%s", out)
		}
	})
}

// Real apps keep working in the sandbox: Express 5 and Fastify 5 on
// Node.js 24, a Bun.serve app that keeps state in its StateDirectory=, and
// an app in a home directory that reads its own 0600 file.
func TestSandboxedApps(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	mods := b.frameworks()
	for _, a := range []struct {
		name, app string
		port      int
	}{{"exp", "express-server.js", 3360}, {"fst", "fastify-server.js", 3362}} {
		b.app("/srv/"+a.name, a.app, "server.js")
		b.sh(fmt.Sprintf(`ln -s %s /srv/%s/node_modules`, mods, a.name))
		b.write("/srv/"+a.name+"/bm2.toml", fmt.Sprintf("name = %q\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = %d\n", a.name, a.port))
		r := b.must(0, "/srv/"+a.name, "serve")
		if !strings.Contains(r.stdout, a.name+" online and confirmed") {
			t.Errorf("%s:\n%s", a.name, r.stdout)
		}
		seen := map[string]bool{}
		for i := 0; i < 20 && len(seen) < 2; i++ {
			seen[strings.TrimSpace(b.sh(fmt.Sprintf(`curl -sf --max-time 2 http://127.0.0.1:%d/`, a.port)))] = true
		}
		if len(seen) < 2 {
			t.Errorf("%s: one instance answered all: %v", a.name, seen)
		}
	}

	b.app("/srv/state", "bun-state.ts", "index.ts")
	b.write("/srv/state/bm2.toml", "name = \"state\"\nscript = \"index.ts\"\nport = 3364\n")
	b.must(0, "/srv/state", "serve")
	b.sh(`curl -sf --max-time 2 http://127.0.0.1:3364/state`)
	if n := strings.TrimSpace(b.sh(`curl -sf --max-time 2 http://127.0.0.1:3364/state`)); n != "2" {
		t.Errorf("state directory count %q, want 2", n)
	}
	if owner := b.sh(`stat -c %U /var/lib/private/bm2/apps/state/hits`); strings.TrimSpace(owner) != "bm2-state" {
		t.Errorf("state file owned by %q", owner)
	}

	// A PM2-style app in a home directory, run as its owner, reading its
	// own 0600 file (the documented step: user = "<owner>").
	b.sh(`useradd -m -s /bin/sh alice`)
	b.app("/home/alice/app", "express-server.js", "server.js")
	b.write("/home/alice/app/server.js", `const fs = require("node:fs");
const secret = fs.readFileSync(__dirname + "/secret.txt", "utf8").trim();
require("node:http").createServer((q, r) => r.end(secret + "\n"))
  .listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true });
`)
	b.write("/home/alice/app/secret.txt", "alice's own\n")
	b.write("/home/alice/app/bm2.toml", "name = \"alice\"\nscript = \"server.js\"\nruntime = \"node\"\nuser = \"alice\"\nport = 3366\n")
	b.sh(`chown -R alice: /home/alice && chmod 0700 /home/alice && chmod 0600 /home/alice/app/secret.txt`)
	b.must(0, "/home/alice/app", "serve")
	if got := b.sh(`curl -sf --max-time 2 http://127.0.0.1:3366/`); strings.TrimSpace(got) != "alice's own" {
		t.Errorf("alice's app answered %q", got)
	}
}

// frameworks puts Express 5 and Fastify 5 where apps inside find them and
// returns their node_modules.
func (b *bed) frameworks() string {
	b.t.Helper()
	mods, err := runtimes.Modules(b.t.Context(), runtimes.Frameworks...)
	if err != nil {
		b.t.Fatalf("frameworks: %v", err)
	}
	return mods
}
