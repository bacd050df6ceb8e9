package main

import (
	"context"
	"fmt"
)

// The webhook receiver that never answers (apps/hang.js), for the stop
// and crash figures: a transient unit in the bm2 sandbox.
const (
	hangURL   = "http://127.0.0.1:9100/hook"
	hangStart = `systemctl is-active -q bench-hang.service || systemd-run -q --unit=bench-hang -p Environment=PORT=9100 /usr/local/bin/node /srv/bench/hang.js; (for i in $(seq 100); do ss -Hltn 'sport = :9100' | grep -q . && exit 0; sleep 0.1; done; exit 1)`
	// hangStop also drops what is still spooled for it, so that no
	// delivery to it outlives the figure that made it.
	hangStop = `systemctl stop bench-hang.service bm2-notify.service 2>/dev/null; rm -f /var/lib/bm2/notify/*.json; true`
)

// hangNotify is the [notify] table of a project whose events of level
// and above go to the receiver that never answers.
func hangNotify(level string) string {
	return fmt.Sprintf("\n[notify]\nwebhook = %q\nallow_local = true\nlevel = %q\n", hangURL, level)
}

// bm2Up registers project (bm2 serve, the first time) and starts it, then
// waits until its probes are done.
func bm2Up(project string) string {
	return fmt.Sprintf("{ test -f /etc/bm2/%[1]s.toml || (cd /srv/%[1]s && bm2 serve >/dev/null); } && bm2 start %[1]s >/dev/null && %[2]s", project, probesDone)
}

// pm2Up starts a fresh app of PM2's from /srv/bench (env: the app's
// environment, such as PORT=…) and waits until it answers.
func pm2Up(name, env, args string, port int) string {
	return fmt.Sprintf("pm2 delete %[1]s >/dev/null 2>&1; cd /srv/bench && %[2]s pm2 start app.js --name %[1]s %[3]s >/dev/null && "+
		"(for i in $(seq 300); do curl -sf -o /dev/null http://127.0.0.1:%[4]d/ && exit 0; sleep 0.1; done; exit 1)", name, env, args, port)
}

// portSilent succeeds once nothing answers on port any more.
func portSilent(port int) string {
	return fmt.Sprintf("(for i in $(seq 50); do curl -s -o /dev/null --max-time 1 http://127.0.0.1:%d/ || exit 0; sleep 0.1; done; exit 1)", port)
}

// notifying succeeds once some notification is spooled and
// bm2-notify.service is busy delivering (to the receiver that never
// answers, whose connections it waits on).
const notifying = `(for i in $(seq 300); do test "$(ls /var/lib/bm2/notify 2>/dev/null | wc -l)" -ge 1 && test "$(systemctl show -P ActiveState bm2-notify.service)" = activating && exit 0; sleep 0.1; done; exit 1)`

// stop times the stop commands: bm2 and PM2 each stopping an app that
// drains and one that ignores the stop signal, and bm2 stopping a project
// whose notifications hang. Each repetition runs the variants in rotating
// order, each from its project started and settled.
func (r *runner) stop(ctx context.Context) error {
	variants := []struct {
		name        string
		bed         *bed
		up, stopCmd string
		port        int
	}{
		{"bm2 stop: 2 instances that drain", r.bm2, bm2Up("stopq") + " && sleep 1", "bm2 stop stopq >/dev/null", 4510},
		{"pm2 stop: 2 instances that drain", r.pm2, pm2Up("stopq", "PORT=4510", "-i 2 --kill-timeout 1000", 4510) + " && sleep 1", "pm2 stop stopq >/dev/null", 4510},
		{"bm2 stop: 1 instance that ignores SIGTERM (stop_timeout_ms = 1000)", r.bm2, bm2Up("stopk") + " && sleep 1", "bm2 stop stopk >/dev/null", 4500},
		{"pm2 stop: 1 process that ignores SIGINT (--kill-timeout 1000)", r.pm2, pm2Up("stopk", "PORT=4500 IGNORE_TERM=1", "--kill-timeout 1000", 4500) + " && sleep 1", "pm2 stop stopk >/dev/null", 4500},
		{"bm2 stop: 2 instances that drain, their notifications hanging", r.bm2, bm2Up("stopn") + " && " + notifying, "bm2 stop stopn >/dev/null", 4520},
	}
	r.record("stop", hangStart+"   # the webhook of stopn, which never answers")
	for _, v := range variants {
		r.record("stop", v.up+"   # before (not timed)", timedScript(v.stopCmd), portSilent(v.port)+"   # after: the port is silent")
	}
	r.record("stop", hangStop+"   # afterwards")
	if out, err := r.bm2.sh(ctx, hangStart); err != nil {
		return fmt.Errorf("the hanging receiver: %w\n%s", err, out)
	}
	defer r.bm2.sh(context.WithoutCancel(ctx), hangStop)
	for rep := range r.s.StopReps {
		for k := range variants {
			v := variants[(k+rep)%len(variants)]
			if out, err := v.bed.sh(ctx, v.up); err != nil {
				return fmt.Errorf("%s: start: %w\n%s", v.name, err, out)
			}
			out, err := v.bed.sh(ctx, timedScript(v.stopCmd))
			if err != nil {
				return fmt.Errorf("%s: %w\n%s", v.name, err, out)
			}
			took, rc, err := parseTimed(out)
			if err != nil {
				return err
			}
			if rc != 0 {
				return fmt.Errorf("%s: exit status %d\n%s", v.name, rc, out)
			}
			if out, err := v.bed.sh(ctx, portSilent(v.port)); err != nil {
				return fmt.Errorf("%s: port %d still answers after the stop: %w\n%s", v.name, v.port, err, out)
			}
			r.sample("stop", v.name, "stop command (ms)", rep, took)
			r.logf("stop %d/%d %-60s %6.0f ms", rep+1, r.s.StopReps, v.name, took)
		}
	}
	r.bm2.sh(ctx, "for p in stopq stopk stopn; do bm2 delete $p >/dev/null; done")
	r.pm2.sh(ctx, "pm2 kill >/dev/null")
	return nil
}
