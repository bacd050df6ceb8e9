package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The faults an operator's host goes through while bm2 acts (docs/crashes.md,
// "Faults"): each is made to happen on the sandbox's real systemd 252,
// under paced load, and the command either completes or says exactly
// what is left, with no instance left pending and no surge left behind.

const faultToml = `name = "fx"
script = "server.js"
runtime = "node"
instances = 2
port = 3600
min_uptime_ms = 500
`

// faultBed is a bed serving the two-instance cluster project fx.
func faultBed(t *testing.T) *bed {
	b := newBed(t)
	b.app("/srv/fx", "graceful-server.js", "server.js")
	b.write("/srv/fx/bm2.toml", faultToml)
	b.must(0, "/srv/fx", "serve")
	b.eventually(10*time.Second, "fx answers", `curl -sf --max-time 2 http://127.0.0.1:3600/`)
	return b
}

// settledProject checks what every fault must leave: each instance
// online and confirmed in its current run, no surge, nothing pending.
// Once one bm2 list shows that, the next must show the same runs the
// same way: a verdict does not come and go.
func (b *bed) settledProject(project string, n int) {
	b.t.Helper()
	settled := func(rows []listRow) bool {
		ok := len(rows) == n
		for _, r := range rows {
			ok = ok && r.State == "online" && deref(r.Reuseport) == "confirmed"
		}
		return ok
	}
	deadline := time.Now().Add(90 * time.Second)
	rows := b.listJSON(project)
	for !settled(rows) {
		if time.Now().After(deadline) {
			b.t.Fatalf("%s not online and confirmed after 90s: %s", project, rowsText(rows))
		}
		time.Sleep(100 * time.Millisecond)
		rows = b.listJSON(project)
	}
	if again := b.listJSON(project); rowsText(again) != rowsText(rows) {
		b.t.Errorf("%s: bm2 list changed its mind:\n%s\nthen\n%s", project, rowsText(rows), rowsText(again))
	}
	// (A reload retires its surge without waiting for the stop.)
	b.eventually(10*time.Second, "the surge stopped",
		fmt.Sprintf(`st=$(systemctl show -P ActiveState bm2@%s-surge.service); echo "$st"; test "$st" = inactive`, project))
	b.confirmedNow(project, n)
}

func rowsText(rows []listRow) string {
	var out strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&out, "%s %s pid %d reuseport %s; ", r.Unit, r.State, r.PID, deref(r.Reuseport))
	}
	return out.String()
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// reexecs are the re-execs a command goes through: one, at a moment of
// its run, and one after another for as long as it runs (p is its pid).
var reexecs = []struct{ name, script string }{
	{"one re-exec after 0.1s", `sleep 0.1; systemctl daemon-reexec`},
	{"one re-exec after 0.6s", `sleep 0.6; systemctl daemon-reexec`},
	{"re-execs throughout", `sleep 0.05; while kill -0 $p 2>/dev/null; do systemctl daemon-reexec; sleep 0.15; done`},
}

// systemctl daemon-reexec, as Debian's systemd package runs it on every
// upgrade, at several moments of a reload under load: the reload
// finishes (exit 0), no request fails, and every instance is confirmed.
func TestFaultReexecDuringReload(t *testing.T) {
	t.Parallel()
	b := faultBed(t)
	for _, c := range reexecs {
		t.Run(c.name, func(t *testing.T) {
			b := b.in(t)
			before := b.pids("fx", 2)
			cmd := fmt.Sprintf(`(bm2 reload fx & p=$!; %s; wait $p)`, c.script)
			res, out, took := b.reloadCmdUnderLoad(cmd, 3600, true)
			t.Logf("reload with %s took %v:\n%s", c.name, took, out)
			if res.errors() != 0 {
				t.Errorf("%v during the reload", res)
			}
			if !strings.Contains(out, "fx reloaded: 2 instances in ") {
				t.Errorf("reload's output:\n%s", out)
			}
			b.restartedAll("fx", before)
			b.settledProject("fx", 2)
		})
	}
}

// A re-exec while bm2 serve brings up a new project: serve exits 0 with
// every instance confirmed, and never says the host has no systemd.
func TestFaultReexecDuringServe(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	for k, c := range reexecs {
		t.Run(c.name, func(t *testing.T) {
			b := b.in(t)
			name := fmt.Sprintf("rx%d", k)
			port := 3610 + 10*k
			b.app("/srv/"+name, "graceful-server.js", "server.js")
			b.write("/srv/"+name+"/bm2.toml", strings.NewReplacer(`"fx"`, `"`+name+`"`, "3600", fmt.Sprint(port)).Replace(faultToml))
			out, err := b.try(fmt.Sprintf(`cd /srv/%s && (bm2 serve >/tmp/serve.out 2>&1 & p=$!; %s; wait $p); rc=$?; cat /tmp/serve.out; echo "rc=$rc"`, name, c.script))
			t.Logf("serve with %s:\n%s", c.name, out)
			if err != nil || !strings.Contains(out, "rc=0") {
				t.Errorf("serve failed: %v\n%s", err, out)
			}
			if strings.Contains(out, "booted with systemd") {
				t.Errorf("serve blamed the host:\n%s", out)
			}
			for i := 0; i < 2; i++ {
				if !regexp.MustCompile(fmt.Sprintf(`(?m)^%s-%d confirmed \(reusePort\)$`, name, i)).MatchString(out) {
					t.Errorf("serve's output lacks %s-%d confirmed:\n%s", name, i, out)
				}
			}
			b.settledProject(name, 2)
		})
	}
}

// Three daemon-reloads while a reload runs: it finishes, nothing fails.
func TestFaultDaemonReloadsDuringReload(t *testing.T) {
	t.Parallel()
	b := faultBed(t)
	cmd := `(bm2 reload fx & p=$!; for i in 1 2 3; do sleep 0.3; systemctl daemon-reload; done; wait $p)`
	res, out, took := b.reloadCmdUnderLoad(cmd, 3600, true)
	t.Logf("reload with three daemon-reloads took %v:\n%s", took, out)
	if res.errors() != 0 {
		t.Errorf("%v during the reload", res)
	}
	if !strings.Contains(out, "fx reloaded: 2 instances in ") {
		t.Errorf("reload's output:\n%s", out)
	}
	b.settledProject("fx", 2)
}

// dbus-daemon restarted (the system bus gone for a moment, every
// connection to it cut), then list and a reload under load; and a
// reload during which the bus restarts. Root's bm2 talks to systemd's
// private socket, as systemctl does, so the bus is not its; a user's
// bm2 goes through the bus, and finds it again.
func TestFaultBusRestart(t *testing.T) {
	t.Parallel()
	b := faultBed(t)
	b.sh(`systemctl start dbus.service`)
	asNobody := `setpriv --reuid=65534 --regid=65534 --clear-groups env -C / bm2 --system list`
	if out := b.sh(asNobody); !strings.Contains(out, "online") {
		t.Fatalf("a user's bm2 list over the bus:\n%s", out)
	}
	b.sh(`systemctl restart dbus.service`)
	if rows := b.listJSON("fx"); len(rows) != 2 {
		t.Errorf("bm2 list after a bus restart: %+v", rows)
	}
	if out := b.sh(asNobody); strings.Count(out, "online") != 2 {
		t.Errorf("a user's bm2 list after a bus restart:\n%s", out)
	}
	for _, cmd := range []string{
		`bm2 reload fx`,
		`(bm2 reload fx & p=$!; sleep 0.3; systemctl restart dbus.service; wait $p)`,
	} {
		res, out, took := b.reloadCmdUnderLoad(cmd, 3600, true)
		t.Logf("%s took %v:\n%s", cmd, took, out)
		if res.errors() != 0 {
			t.Errorf("%v during %s", res, cmd)
		}
		if !strings.Contains(out, "fx reloaded: 2 instances in ") {
			t.Errorf("%s said:\n%s", cmd, out)
		}
		b.settledProject("fx", 2)
	}
}

// journald restarted, then a crash: crash.log has it, and so has the
// journal (the instance_crashed event), and the instance is back.
func TestFaultJournaldRestart(t *testing.T) {
	t.Parallel()
	b := faultBed(t)
	b.sh(`systemctl restart systemd-journald.service`)
	pid := b.pids("fx", 1)[0]
	b.sh(`kill -SEGV ` + pid)
	b.waitEvents(30*time.Second, "instance_crashed", "fx", 1)
	b.eventually(30*time.Second, "crash.log has the crash", `grep -q SIGSEGV /var/log/bm2/fx/fx-0.crash.log`)
	b.settledProject("fx", 2)
}

// bm2 serve and bm2 reload killed (SIGKILL) at several moments: the
// registry write, the private part, daemon-reload, the start jobs, the
// surge. What is left is consistent, and the same command run again
// completes it: every instance confirmed, no surge, no file half-written.
func TestFaultKilledCommand(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	for k, delay := range []string{"0.01", "0.03", "0.08", "0.15", "0.3", "0.6"} {
		t.Run("serve killed after "+delay+"s", func(t *testing.T) {
			b := b.in(t)
			name := fmt.Sprintf("kx%d", k)
			port := 3700 + 10*k
			b.app("/srv/"+name, "graceful-server.js", "server.js")
			// A secret: serve writes a private part beside the project file.
			b.write("/srv/"+name+"/bm2.toml", strings.NewReplacer(`"fx"`, `"`+name+`"`, "3600", fmt.Sprint(port)).Replace(faultToml)+"[env]\nTOKEN = \"s3cret\"\n")
			out := b.sh(fmt.Sprintf(`cd /srv/%s && { bm2 serve >/tmp/k.out 2>&1 & p=$!; sleep %s; kill -KILL $p; wait $p; cat /tmp/k.out; }; true`, name, delay))
			t.Logf("serve killed after %ss had said:\n%s", delay, out)
			// Whatever it left, bm2 list reads it.
			b.must(0, "/", "list")
			r := b.must(0, "/srv/"+name, "serve")
			t.Logf("serve again:\n%s", r.stdout)
			b.settledProject(name, 2)
			if env := b.appEnvOf(fmt.Sprintf("bm2@%s-0.service", name)); env["TOKEN"] != "s3cret" {
				t.Errorf("the secret did not reach the app: %v", env)
			}
			if left := b.sh(`find /etc/bm2 /var/lib/bm2 -name '.#*'`); strings.TrimSpace(left) != "" {
				t.Errorf("files half-written left behind:\n%s", left)
			}
		})
	}
	b.app("/srv/fx", "graceful-server.js", "server.js")
	b.write("/srv/fx/bm2.toml", faultToml)
	b.must(0, "/srv/fx", "serve")
	for _, delay := range []string{"0.05", "0.3", "0.7", "1.2"} {
		t.Run("reload killed after "+delay+"s", func(t *testing.T) {
			b := b.in(t)
			// Under load: the killed reload, then the one that completes
			// it, lose no request between them.
			cmd := fmt.Sprintf(`{ bm2 reload fx >/tmp/k.out 2>&1 & p=$!; sleep %s; kill -KILL $p; wait $p; echo "killed reload had said:"; cat /tmp/k.out; echo "reload again:"; bm2 reload fx; }`, delay)
			res, out, _ := b.reloadCmdUnderLoad(cmd, 3600, true)
			t.Logf("reload killed after %ss:\n%s", delay, out)
			if res.errors() != 0 {
				t.Errorf("%v during the killed reload and the next", res)
			}
			b.settledProject("fx", 2)
		})
	}
}

// slowApp listens (with reusePort) only after a few seconds: the
// command and the probes wait for it, calling systemd all the while.
const slowApp = `const http = require("node:http");
setTimeout(() => http.createServer((q, r) => r.end("ok\n")).listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true }), 3000);
`

// Re-execs while serve and the probes wait for instances that take 3 s
// to listen: calls on their way when systemd re-executes get "Message
// recipient disconnected from message bus without replying"
// (NoReply), and the probes' connections to the private socket are cut.
// serve must still confirm both instances and exit 0.
//
// What 252 does to a probe across a re-exec (checked here): its job
// (the oneshot's start job) and its process survive, with the same job
// id and InvocationID, and the instance still Wants= it (re-exec reads
// the unit files and drop-ins again); the instance's own finished start
// job is gone from the job list. So a probe loses nothing but its
// connection to the private socket, which systemd closes at the end of
// its deserialization.
func TestFaultReexecWhileWaiting(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.write("/srv/slow/server.js", slowApp)
	b.write("/srv/slow/bm2.toml", "name = \"slow\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3690\nmin_uptime_ms = 500\n")
	out, err := b.try(`cd /srv/slow && (bm2 serve >/tmp/serve.out 2>&1 & p=$!
until [ "$(systemctl show -P ActiveState bm2-probe@slow-0.service)" = activating ]; do sleep 0.05; done
systemctl show -p Job -p MainPID -p InvocationID bm2-probe@slow-0.service >/tmp/probe.before
echo "Wants=$(systemctl show -P Wants bm2@slow-0.service | tr ' ' '\n' | sort | tr '\n' ' ')" >>/tmp/probe.before
# Five at once (about 1.2 s: the app listens after 3), while the probe waits.
for n in 1 2 3 4 5; do systemctl daemon-reexec; sleep 0.05; done
systemctl show -p Job -p MainPID -p InvocationID bm2-probe@slow-0.service >/tmp/probe.after
echo "Wants=$(systemctl show -P Wants bm2@slow-0.service | tr ' ' '\n' | sort | tr '\n' ' ')" >>/tmp/probe.after
while kill -0 $p 2>/dev/null && [ $n -lt 30 ]; do systemctl daemon-reexec; n=$((n+1)); sleep 0.05; done
echo "re-execs: $n"
wait $p); rc=$?; cat /tmp/serve.out; echo "rc=$rc"; echo "probe before:"; cat /tmp/probe.before; echo "probe after:"; cat /tmp/probe.after`)
	t.Logf("serve with re-execs while it waits:\n%s", out)
	if err != nil || !strings.Contains(out, "rc=0") {
		t.Errorf("serve failed: %v", err)
	}
	if strings.Contains(out, "booted with systemd") {
		t.Errorf("serve blamed the host")
	}
	before, after, _ := strings.Cut(out[strings.Index(out, "probe before:"):], "probe after:")
	if strings.TrimSpace(strings.TrimPrefix(before, "probe before:")) != strings.TrimSpace(after) {
		t.Errorf("the probe's job, process or run changed across the re-execs")
	}
	if !regexp.MustCompile(`(?m)^Wants=.*bm2-probe@slow-0\.service`).MatchString(after) {
		t.Errorf("the instance no longer wants its probe after the re-execs")
	}
	b.settledProject("slow", 2)
}

// A full /var/log/bm2 (a 64 KiB tmpfs, filled), then a read-only one:
// a crash still restarts the instance and is in the journal, and the
// crash.log line that could not be written is said (state_write_failed,
// with the path and the errno) and shown by bm2 status. A project whose
// errored mark cannot be written under /var/lib/bm2 is still errored,
// from its mark under /run/bm2.
func TestFaultFullDisk(t *testing.T) {
	t.Parallel()
	b := faultBed(t)
	b.sh(`mount -t tmpfs -o size=64k,mode=0755 bm2full /var/log/bm2
dd if=/dev/zero of=/var/log/bm2/fill bs=4k 2>/dev/null || true
test "$(df --output=avail /var/log/bm2 | tail -1 | tr -d ' ')" -eq 0`)
	for k, c := range []struct{ errno, setup string }{
		{"ENOSPC", `true`},
		{"EROFS", `rm -f /var/log/bm2/fill; mount -o remount,ro /var/log/bm2`},
	} {
		b.sh(c.setup)
		pid := b.pids("fx", 1)[0]
		b.sh(`kill -SEGV ` + pid)
		b.waitEvents(30*time.Second, "instance_crashed", "fx", k+1)
		evs := b.waitEvents(30*time.Second, "state_write_failed", "fx", k+1)
		ev := evs[len(evs)-1]
		if ev.str("BM2_PATH") != "/var/log/bm2/fx/fx-0.crash.log" || ev.str("BM2_ERRNO") != c.errno || ev.str("BM2_INSTANCE") != "fx-0" {
			t.Errorf("state_write_failed: %v", ev)
		}
		// The restart and the budget go on.
		b.settledProject("fx", 2)
		if r := b.must(0, "/", "status", "fx"); !strings.Contains(r.stdout, "/var/log/bm2/fx/fx-0.crash.log could not be written ("+c.errno) {
			t.Errorf("bm2 status does not say the write failed:\n%s", r.stdout)
		}
	}
	b.sh(`umount /var/log/bm2`)

	// The errored mark: /var/lib/bm2/errored read-only, an app that
	// binds its port exclusively.
	b.sh(`mount -t tmpfs -o ro,mode=0755 bm2ro /var/lib/bm2/errored`)
	b.nodeProject("solo", 2, 3660, "REUSE_PORT = \"0\"", "")
	b.sh(`systemctl daemon-reload && systemctl start bm2-solo.target`)
	b.eventually(60*time.Second, "solo errored", `bm2 list --json solo | grep -q '"state": *"errored"'`)
	rows := b.listJSON("solo")
	for _, r := range rows {
		if r.State != "errored" || r.Reason != "reuseport_missing" {
			t.Errorf("%s: %s (%s), want errored (reuseport_missing)", r.Unit, r.State, r.Reason)
		}
	}
	b.sh(`test -s /run/bm2/errored-projects/solo && ! test -e /var/lib/bm2/errored/solo`)
	evs := b.waitEvents(30*time.Second, "state_write_failed", "solo", 1)
	if ev := evs[0]; ev.str("BM2_PATH") != "/var/lib/bm2/errored/solo" || ev.str("BM2_ERRNO") != "EROFS" {
		t.Errorf("state_write_failed: %v", ev)
	}
	b.sh(`for u in bm2@solo-0 bm2@solo-1; do test "$(systemctl show -P ActiveState $u.service)" != active; done`)
	b.sh(`umount /var/lib/bm2/errored`)
}

// A probe lost in its window. Killed (SIGKILL, the OOM killer),
// systemd starts it again (Restart=on-abnormal) and the new one judges
// the run, with no command waiting. Stopped by hand, it ends cleanly
// without a verdict: the serve waiting for it starts it again; with no
// command waiting, the instance shows unprobed until the next bm2 start,
// which probes it again.
func TestFaultProbeLost(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.write("/srv/slow/server.js", slowApp)
	b.write("/srv/slow/bm2.toml", "name = \"slow\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 1\nport = 3690\nmin_uptime_ms = 500\n")
	const inWindow = `until [ "$(systemctl show -P ActiveState bm2-probe@slow-0.service)" = activating ]; do sleep 0.05; done; `
	out, err := b.try(`cd /srv/slow && (bm2 serve >/tmp/serve.out 2>&1 & p=$!
` + inWindow + `systemctl stop bm2-probe@slow-0.service
wait $p); rc=$?; cat /tmp/serve.out; echo "rc=$rc"`)
	t.Logf("serve whose probe was stopped:\n%s", out)
	if err != nil || !strings.Contains(out, "rc=0") || !strings.Contains(out, "slow-0 confirmed (reusePort)") {
		t.Errorf("serve did not get a verdict: %v", err)
	}
	if !strings.Contains(out, "slow-0: its reusePort probe ended without a verdict; starting the probe again") {
		t.Errorf("serve did not say it started the probe again")
	}
	b.settledProject("slow", 1)

	// Killed, nobody waiting: systemd starts it again.
	b.sh(`systemctl restart bm2@slow-0.service; ` + inWindow + `systemctl kill -s KILL bm2-probe@slow-0.service`)
	b.settledProject("slow", 1)
	if n := b.show("bm2-probe@slow-0.service", "NRestarts"); n == "0" {
		t.Errorf("the killed probe was not started again (NRestarts=%s)", n)
	}

	// Stopped, nobody waiting: unprobed, until bm2 start.
	b.sh(`systemctl restart bm2@slow-0.service; ` + inWindow + `systemctl stop bm2-probe@slow-0.service`)
	b.eventually(20*time.Second, "slow-0 listens", `curl -sf --max-time 2 http://127.0.0.1:3690/`)
	if rows := b.listJSON("slow"); len(rows) != 1 || deref(rows[0].Reuseport) != "unprobed" {
		t.Errorf("with its probe stopped, bm2 list (want unprobed): %+v", rows)
	}
	r := b.must(0, "/", "start", "slow")
	t.Logf("bm2 start:\n%s", r.stdout)
	b.settledProject("slow", 1)
}

// A reboot, as far as a sandbox whose PID 1 cannot reboot without
// ending it allows: every bm2 unit stopped, /run emptied (a tmpfs at
// boot), the generator run again and multi-user.target started, as at
// boot. A served project comes back and is confirmed; an errored one
// stays down (its mark is under /var); an instance marked errored for
// one boot (under /run) tries again.
func TestFaultReboot(t *testing.T) {
	t.Parallel()
	b := faultBed(t)
	b.nodeProject("solo", 2, 3660, "REUSE_PORT = \"0\"", "")
	// --no-block: the probe stops the project it errors, and that may
	// cancel the target's own start job before it is done.
	b.sh(`systemctl daemon-reload && systemctl start --no-block bm2-solo.target`)
	b.eventually(60*time.Second, "solo errored", `test -s /var/lib/bm2/errored/solo`)
	b.sh(`install -d /run/bm2/errored && printf 'port_in_use\tpython3 (pid 1), uid 65534 (nobody)\n' >/run/bm2/errored/fx-1`)

	// Starting an active multi-user.target again starts nothing: start
	// what it wants, as boot does, after what boot does first (tmpfiles,
	// which makes bm2's directories in /run again).
	b.sh(`systemctl stop bm2.slice
rm -rf /run/bm2
systemd-tmpfiles --create
systemctl daemon-reload
wants=$(systemctl show -P Wants multi-user.target | tr ' ' '\n' | grep '^bm2-')
echo "$wants" | grep -qx bm2-fx.target && echo "$wants" | grep -qx bm2-solo.target
systemctl start --no-block $wants`)
	b.settledProject("fx", 2)
	rows := b.listJSON("solo")
	for _, r := range rows {
		if r.State == "online" {
			t.Errorf("%s came back after the reboot although its project is errored", r.Unit)
		}
	}
	if r := b.must(0, "/", "status", "solo"); !strings.Contains(r.stdout, "reuseport_missing") {
		t.Errorf("bm2 status solo after the reboot:\n%s", r.stdout)
	}
}

// Every test the fault table of docs/crashes.md names exists, and every fault
// test is in the table.
func TestFaultTableNamesTests(t *testing.T) {
	repo := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(repo, "docs", "crashes.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n## Faults\n")
	if !ok {
		t.Fatal("docs/crashes.md has no Faults section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(Test[A-Za-z]+)`").FindAllStringSubmatch(table, -1) {
		named[m[1]] = true
	}
	var src strings.Builder
	files, _ := filepath.Glob(filepath.Join(repo, "e2e", "*_test.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(data)
	}
	for name := range named {
		if !strings.Contains(src.String(), "func "+name+"(t *testing.T)") {
			t.Errorf("the fault table of docs/crashes.md names %s, which does not exist", name)
		}
	}
	for _, m := range regexp.MustCompile(`func (TestFault[A-Za-z]+)\(`).FindAllStringSubmatch(src.String(), -1) {
		if !named[m[1]] && m[1] != "TestFaultTableNamesTests" {
			t.Errorf("%s is not in the fault table of docs/crashes.md", m[1])
		}
	}
}
