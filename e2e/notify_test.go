package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// hookPost is one request the webhook receiver (e2e/apps/webhook.js) got.
type hookPost struct {
	Method, URL string
	Body        map[string]string
}

// hookPosts reads what the receiver got so far.
func (b *bed) hookPosts(file string) []hookPost {
	b.t.Helper()
	out, _ := b.try(`cat ` + file + ` 2>/dev/null`)
	var posts []hookPost
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var raw struct{ Method, URL, Body string }
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			b.t.Fatalf("receiver line %q: %v", line, err)
		}
		p := hookPost{Method: raw.Method, URL: raw.URL}
		if err := json.Unmarshal([]byte(raw.Body), &p.Body); err != nil {
			b.t.Fatalf("body %q is not a JSON object of strings: %v", raw.Body, err)
		}
		posts = append(posts, p)
	}
	return posts
}

// waitPost waits for a post about an event of a project.
func (b *bed) waitPost(file, event, project string) hookPost {
	b.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, p := range b.hookPosts(file) {
			if p.Body["event"] == event && p.Body["project"] == project {
				return p
			}
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no %s of %s posted within 60 s; got %+v\n%s", event, project, b.hookPosts(file),
				b.sh(`journalctl --no-pager -o cat -u bm2-notify.service -n 30; ls -l /var/lib/bm2/notify`))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The state of bm2-notify.service, a oneshot: activating while it delivers.
const (
	delivering = `test "$(systemctl show -P ActiveState bm2-notify.service)" = activating`
	idle       = `test "$(systemctl show -P ActiveState bm2-notify.service)" = inactive`
)

// privateWebhook puts a project's webhook in its private part, root's
// alone, and, the receivers here being on loopback, allow_local = true in
// its [notify] table (bm2-notify refuses loopback without it).
func (b *bed) privateWebhook(name, url string) {
	b.t.Helper()
	b.sh(fmt.Sprintf(`(umask 077; printf '[notify]\nwebhook = "%%s"\n' %q > /etc/bm2/private/%s.toml)`, url, name))
	b.allowLocal("/etc/bm2/" + name + ".toml")
}

// allowLocal sets [notify] allow_local = true in a project file.
func (b *bed) allowLocal(file string) {
	b.t.Helper()
	b.sh(fmt.Sprintf(`f=%s
if grep -q '^\[notify\]$' "$f"; then sed -i 's/^\[notify\]$/[notify]\nallow_local = true/' "$f"; else printf '\n[notify]\nallow_local = true\n' >> "$f"; fi`, file))
}

// checkBody checks the fields every notification has, and those given.
func checkBody(t *testing.T, p hookPost, host string, want map[string]string) {
	t.Helper()
	if p.Method != "POST" || p.URL != "/bm2" {
		t.Errorf("request %s %s, want POST /bm2", p.Method, p.URL)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", p.Body["time"]); err != nil {
		t.Errorf("time %q: %v", p.Body["time"], err)
	}
	if p.Body["host"] != host || p.Body["message"] == "" {
		t.Errorf("host %q (want %q), message %q", p.Body["host"], host, p.Body["message"])
	}
	for k, v := range want {
		if !strings.Contains(p.Body[k], v) {
			t.Errorf("%s = %q, want %q in it; body %v", k, p.Body[k], v, p.Body)
		}
	}
}

// Every event at or above the project's level reaches a real receiver,
// delivered by bm2-notify.service from the spool: an instance that gives
// up, a runtime refused, a project without reusePort.
func TestNotifyEvents(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	host := strings.TrimSpace(b.sh(`hostname`))
	b.sh(`set -e
test "$(stat -c '%a %U' /var/lib/bm2/notify)" = "700 root"
systemctl is-active -q bm2-notify.path
systemctl show -P WantedBy bm2-notify.path | grep -qw paths.target`)
	b.app("/srv/hook", "webhook.js", "webhook.js")
	b.sh(`systemd-run -q --unit=hook -p Environment=OUT=/tmp/hook.jsonl -p Environment=PORT=9000 /usr/local/bin/node /srv/hook/webhook.js`)
	b.eventually(10*time.Second, "webhook up", `curl -s -o /dev/null -X POST http://127.0.0.1:9000/ready && rm -f /tmp/hook.jsonl`)
	const hook = "http://127.0.0.1:9000/bm2"

	// Crashes 200 ms after every start, gives up after 2 restarts; at the
	// default level (error) its crashes are not sent, its giving up is.
	b.nodeProject("crashy", 1, 3000, "CRASH_INSTANCE = \"0\"\nCRASH_AFTER_MS = \"200\"", "max_restarts = 2\nexec_mode = \"fork\"")
	b.privateWebhook("crashy", hook)
	// Node.js 20, below the floor.
	b.app("/srv/oldnode", "node-server.js", "server.js")
	b.write("/etc/bm2/oldnode.toml", "name = \"oldnode\"\nscript = \"server.js\"\ncwd = \"/srv/oldnode\"\nruntime = \"node\"\nruntime_path = \"/usr/bin/node\"\nport = 3100\n")
	b.privateWebhook("oldnode", hook)
	// Cluster mode without reusePort; at level warning.
	b.nodeProject("solo", 2, 3200, `REUSE_PORT = "0"`, "[notify]\nlevel = \"warning\"\n")
	b.privateWebhook("solo", hook)
	// The same receiver, without allow_local: bm2-notify refuses loopback.
	b.nodeProject("nolocal", 1, 3300, "CRASH_INSTANCE = \"0\"\nCRASH_AFTER_MS = \"200\"", "max_restarts = 1\nexec_mode = \"fork\"")
	b.sh(fmt.Sprintf(`(umask 077; printf '[notify]\nwebhook = "%s"\n' > /etc/bm2/private/nolocal.toml)`, hook))
	b.sh(`systemctl daemon-reload && systemctl start --no-block bm2-crashy.target bm2-oldnode.target bm2-solo.target bm2-nolocal.target`)

	t.Run("loopback refused without allow_local", func(t *testing.T) {
		b := b.in(t)
		es := b.waitEvents(60*time.Second, "notification_dropped", "nolocal", 1)
		if m := es[0].str("MESSAGE"); !strings.Contains(m, "gave up notifying instance_errored of nolocal-0") ||
			!strings.Contains(m, "at attempt 1: notify "+hook+": refused to connect: 127.0.0.1 is a loopback address") {
			t.Errorf("notification_dropped: %q", m)
		}
		for _, p := range b.hookPosts("/tmp/hook.jsonl") {
			if p.Body["project"] == "nolocal" {
				t.Errorf("the loopback receiver got a notification of nolocal: %v", p.Body)
			}
		}
	})

	t.Run("instance_errored", func(t *testing.T) {
		b := b.in(t)
		p := b.waitPost("/tmp/hook.jsonl", "instance_errored", "crashy")
		checkBody(t, p, host, map[string]string{"instance": "crashy-0", "reason": "restart_budget_exhausted", "level": "error",
			"message": "crashy-0 gave up after"})
		if n := len(b.waitEvents(10*time.Second, "instance_crashed", "crashy", 3)); n != 3 {
			t.Errorf("%d instance_crashed events, want 3", n)
		}
		for _, p := range b.hookPosts("/tmp/hook.jsonl") {
			if p.Body["project"] == "crashy" && p.Body["event"] != "instance_errored" {
				t.Errorf("sent below the level (error): %v", p.Body)
			}
		}
	})

	t.Run("runtime_rejected", func(t *testing.T) {
		b := b.in(t)
		p := b.waitPost("/tmp/hook.jsonl", "runtime_rejected", "oldnode")
		checkBody(t, p, host, map[string]string{"instance": "oldnode-0", "reason": "runtime_below_floor", "level": "error",
			"message": "runtime /usr/bin/node is Node.js v20."})
		// It gave up too: refused, it is not restarted.
		b.waitPost("/tmp/hook.jsonl", "instance_errored", "oldnode")
	})

	t.Run("reuseport_missing", func(t *testing.T) {
		b := b.in(t)
		p := b.waitPost("/tmp/hook.jsonl", "reuseport_missing", "solo")
		checkBody(t, p, host, map[string]string{"instance": "solo-", "reason": "reuseport_missing", "level": "error",
			"detail": "cluster mode needs reusePort", "message": "port 3200 is bound exclusively"})
		b.eventually(30*time.Second, "every post delivered, the spool empty, the deliverer gone",
			`test -z "$(ls -A /var/lib/bm2/notify)" && `+idle)
		n := 0
		for _, p := range b.hookPosts("/tmp/hook.jsonl") {
			if p.Body["event"] == "reuseport_missing" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d reuseport_missing posts, want 1", n)
		}
		log := b.sh(`journalctl --no-pager -o cat -u bm2-notify.service`)
		if !strings.Contains(log, "notified reuseport_missing of solo-") || !strings.Contains(log, "to "+hook+", attempt 1 of 5") {
			t.Errorf("bm2-notify.service's journal:\n%s", log)
		}
	})
}

// The host's own addresses are as loopback: with 10.77.0.1 added to lo
// (in the bed's own network namespace) and a receiver on every address,
// a project whose webhook is http://10.77.0.1:9000/bm2, without
// allow_local, has its notification refused at the first attempt, and
// notification_dropped and bm2 check say why; the receiver gets nothing
// of it. The same webhook in a file of root's with allow_local is
// delivered.
func TestNotifyRefusesHostAddress(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.sh(`ip addr add 10.77.0.1/32 dev lo`)
	b.app("/srv/hook", "webhook.js", "webhook.js")
	b.sh(`systemd-run -q --unit=hook -p Environment=OUT=/tmp/hook.jsonl -p Environment=PORT=9000 -p Environment=HOST=0.0.0.0 /usr/local/bin/node /srv/hook/webhook.js`)
	b.eventually(10*time.Second, "webhook up on 10.77.0.1", `curl -s -o /dev/null -X POST http://10.77.0.1:9000/ready && rm -f /tmp/hook.jsonl`)
	const hook = "http://10.77.0.1:9000/bm2"

	// Both crash 200 ms after every start and give up after 1 restart.
	crash := "CRASH_INSTANCE = \"0\"\nCRASH_AFTER_MS = \"200\""
	b.nodeProject("ownaddr", 1, 3000, crash, "max_restarts = 1\nexec_mode = \"fork\"")
	b.sh(fmt.Sprintf(`(umask 077; printf '[notify]\nwebhook = "%s"\n' > /etc/bm2/private/ownaddr.toml)`, hook))
	b.nodeProject("allowed", 1, 3100, crash, "max_restarts = 1\nexec_mode = \"fork\"")
	b.privateWebhook("allowed", hook)
	b.sh(`systemctl daemon-reload && systemctl start --no-block bm2-ownaddr.target bm2-allowed.target`)

	es := b.waitEvents(60*time.Second, "notification_dropped", "ownaddr", 1)
	if m := es[0].str("MESSAGE"); !strings.Contains(m, "gave up notifying instance_errored of ownaddr-0") ||
		!strings.Contains(m, "at attempt 1: notify "+hook+": refused to connect: 10.77.0.1 is one of this host's own addresses") ||
		!strings.Contains(m, "allowed only by [notify] allow_local = true in a project file root wrote") {
		t.Errorf("notification_dropped: %q", m)
	}
	b.waitPost("/tmp/hook.jsonl", "instance_errored", "allowed")
	for _, p := range b.hookPosts("/tmp/hook.jsonl") {
		if p.Body["project"] == "ownaddr" {
			t.Errorf("the receiver on 10.77.0.1 got a notification of ownaddr: %v", p.Body)
		}
	}
	if out := b.bm2("/", "check", "ownaddr").stdout; !strings.Contains(out, "notify: webhook "+hook+" (level error): bm2-notify refuses it: 10.77.0.1 is one of this host's own addresses") {
		t.Errorf("bm2 check ownaddr:\n%s", out)
	}
}

// crashGaps is, for each crash of a unit's app ("crashing on purpose"),
// how long until its next run listened, from the journal's timestamps.
func (b *bed) crashGaps(unit string) []time.Duration {
	b.t.Helper()
	var crashes, listens []int64
	for _, e := range b.journal("-u " + unit) {
		switch m := e.str("MESSAGE"); {
		case strings.Contains(m, "crashing on purpose"):
			crashes = append(crashes, e.usec("__MONOTONIC_TIMESTAMP"))
		case strings.Contains(m, " listening on "):
			listens = append(listens, e.usec("__MONOTONIC_TIMESTAMP"))
		}
	}
	var gaps []time.Duration
	for _, c := range crashes {
		for _, l := range listens {
			if l > c {
				gaps = append(gaps, time.Duration(l-c)*time.Microsecond)
				break
			}
		}
	}
	return gaps
}

// A receiver that accepts the connection and never answers delays neither
// the restarts of a crashing instance nor a project's stop: each
// notification to it is tried 5 times, then dropped with a line that says
// so, its URL redacted.
func TestNotifyHangingReceiver(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/hang", "hang-webhook.js", "hang.js")
	b.sh(`systemd-run -q --unit=hang -p Environment=OUT=/tmp/hang.log -p Environment=PORT=9100 /usr/local/bin/node /srv/hang/hang.js`)
	// Up once it listens; the test itself never connects.
	b.eventually(10*time.Second, "hanging receiver up", `ss -Hltn 'sport = :9100' | grep -q .`)
	const token = "s3cret-token-77"
	hang := "http://127.0.0.1:9100/hook?token=" + token

	// Two identical crash loops (500 ms after each start, 3 restarts),
	// one notifying every crash (level warning) to the hanging receiver.
	crashLoop := "CRASH_INSTANCE = \"0\"\nCRASH_AFTER_MS = \"500\""
	extra := "max_restarts = 3\nmin_uptime_ms = 60000\nexec_mode = \"fork\"\n"
	b.nodeProject("hung", 1, 3000, crashLoop, extra+"[notify]\nlevel = \"warning\"\n")
	b.privateWebhook("hung", hang)
	b.nodeProject("free", 1, 3100, crashLoop, extra)
	// A healthy cluster project notifying everything (level info): its
	// reuseport_confirmed notifications hang while it is stopped.
	b.nodeProject("steady", 2, 3200, "", "[notify]\nlevel = \"info\"\n")
	b.privateWebhook("steady", hang)
	b.sh(`systemctl daemon-reload && systemctl start --no-block bm2-hung.target bm2-free.target bm2-steady.target`)

	t.Run("restarts are not delayed", func(t *testing.T) {
		b := b.in(t)
		// 4 runs of 0.5 s: seconds. Were a restart to wait for the
		// notification of its crash (31 s each), far longer than this.
		for _, p := range []string{"hung", "free"} {
			b.eventually(60*time.Second, p+" gave up", `test "$(systemctl show -P ActiveState bm2@`+p+`-0.service)" = failed`)
		}
		for _, p := range []string{"hung", "free"} {
			if n := len(b.waitEvents(10*time.Second, "instance_crashed", p, 4)); n != 4 {
				t.Errorf("%s: %d instance_crashed events, want 4", p, n)
			}
		}
		hung, free := b.crashGaps("bm2@hung-0.service"), b.crashGaps("bm2@free-0.service")
		if len(hung) != 3 || len(free) != 3 {
			t.Errorf("%d and %d restarts seen in the journal, want 3 each (crash to the next run listening: %v and %v)", len(hung), len(free), hung, free)
		}
		// The notifications of hung's crashes are being tried meanwhile.
		b.eventually(20*time.Second, "the receiver is tried", `test "$(grep -c connection /tmp/hang.log 2>/dev/null)" -ge 4`)
		b.sh(`set -e
` + delivering + `
test "$(stat -c %a /var/lib/bm2/notify)" = 700
for f in /var/lib/bm2/notify/*.json; do test "$(stat -c '%a %U' "$f")" = "600 root" || exit 1; done`)
	})

	t.Run("a stop is not delayed", func(t *testing.T) {
		b := b.in(t)
		b.waitEvents(30*time.Second, "reuseport_confirmed", "steady", 2)
		b.eventually(20*time.Second, "steady's notifications under way",
			`test "$(ls /var/lib/bm2/notify | wc -l)" -ge 2 && `+delivering)
		b.sh(`timeout 30 systemctl stop bm2-steady.target bm2-steady.slice`)
		for i := 0; i < 2; i++ {
			if s := b.show(fmt.Sprintf("bm2@steady-%d.service", i), "ActiveState"); s != "inactive" {
				t.Errorf("steady-%d is %s after the stop", i, s)
			}
		}
		if _, err := b.try(delivering); err != nil {
			t.Error("the stop ended only once the notifications were given up")
		}
	})

	t.Run("retried, then dropped with a line", func(t *testing.T) {
		b := b.in(t)
		shown := "http://127.0.0.1:9100/hook?REDACTED"
		b.eventually(120*time.Second, "every notification given up, the spool empty, the deliverer gone",
			`test -z "$(ls -A /var/lib/bm2/notify)" && `+idle)
		log := b.sh(`journalctl --no-pager -o cat -u bm2-notify.service`)
		for _, want := range []string{
			"gave up notifying instance_crashed of hung-0 (",
			"gave up notifying instance_errored of hung-0 (",
			"gave up notifying reuseport_confirmed of steady-0 (",
			") to " + shown + " after 5 attempts: notify " + shown + ": no answer within 3s; the notification is dropped",
		} {
			if !strings.Contains(log, want) {
				t.Errorf("bm2-notify.service's journal lacks %q:\n%s", want, log)
			}
		}
		if n := strings.Count(log, "gave up notifying"); n != 7 {
			t.Errorf("%d notifications given up, want 7 (hung: 4 crashes and its giving up; steady: 2 confirmed)", n)
		}
		// And as the projects' events, which bm2 events shows (root's: trusted).
		for p, want := range map[string]int{"hung": 5, "steady": 2} {
			es := b.events("notification_dropped", p)
			if len(es) != want {
				t.Errorf("%d notification_dropped events of %s, want %d", len(es), p, want)
				continue
			}
			if e := es[0]; e.str("_UID") != "0" || e.str("PRIORITY") != "4" || e.str("MESSAGE_ID") != "d31724daabef434c909c9630aee35e7f" ||
				!strings.Contains(e.str("MESSAGE"), "gave up notifying") || !strings.HasPrefix(e.str("BM2_INSTANCE"), p+"-") {
				t.Errorf("notification_dropped: %v", e)
			}
		}
		if out := b.sh(`bm2 events hung`); !strings.Contains(out, "notification_dropped") {
			t.Errorf("bm2 events hung:\n%s", out)
		}
		if strings.Contains(log, "notified ") {
			t.Errorf("a notification to a receiver that never answers was delivered:\n%s", log)
		}
		// 5 attempts each, one connection per attempt.
		if n := strings.Count(b.sh(`cat /tmp/hang.log`), "connection"); n != 7*5 {
			t.Errorf("the receiver saw %d connections, want %d (7 notifications x 5 attempts)", n, 7*5)
		}
		if out, _ := b.try(`journalctl --no-pager -o verbose | grep -c ` + token); strings.TrimSpace(out) != "0" {
			t.Errorf("the webhook's token is in the journal %s times", strings.TrimSpace(out))
		}
	})
}
