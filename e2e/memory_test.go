package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// oomKills is the kernel's count of OOM kills (/proc/vmstat oom_kill):
// it moves for any cgroup's, on cgroup v1 as on v2, where systemd 252's
// Result= alone would not say it on v1.
func (b *bed) oomKills() int {
	b.t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(b.sh(`awk '$1 == "oom_kill" { print $2 }' /proc/vmstat`)))
	if err != nil {
		b.t.Fatalf("oom_kill in /proc/vmstat: %v", err)
	}
	return n
}

// The graceful memory restart: an instance that keeps 20 MB more every
// second is reloaded alone once its memory stays above memory_restart,
// before the kernel's memory_max would kill it: memory_restart (from
// bm2's own unit, with the figure), a crash.log line, the old run ended
// on SIGTERM and not by the OOM killer, its neighbour untouched, and the
// shared port answering every request meanwhile (the surge serves).
func TestMemoryRestart(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/mr", "leak-server.js", "server.js")
	b.write("/srv/mr/bm2.toml", `name = "mr"
script = "server.js"
runtime = "node"
instances = 2
port = 3470
memory_restart = "160M"
memory_check_interval_ms = 1000
stop_timeout_ms = 3000

[resources]
memory_max = "400M"
`)
	r := b.must(0, "/srv/mr", "serve")
	t.Logf("serve:\n%s%s", r.stdout, r.stderr)
	if got := b.show("bm2@mr-1.service", "MemoryMax"); got != strconv.Itoa(400<<20) {
		t.Fatalf("MemoryMax=%s", got)
	}
	if got := b.show("bm2-mr-memory.timer", "ActiveState"); got != "active" {
		t.Fatalf("bm2-mr-memory.timer is %s", got)
	}
	b.eventually(20*time.Second, "systemd reads the instances' memory",
		`m=$(systemctl show -P MemoryCurrent bm2@mr-1.service); case "$m" in ""|*[!0-9]*|0|18446744073709551615) exit 1;; esac`)
	inv0, inv1 := b.show("bm2@mr-0.service", "InvocationID"), b.show("bm2@mr-1.service", "InvocationID")
	ooms := b.oomKills()

	// The shared port answers all along.
	b.sh(`systemd-run --unit=mr-watch --property=Type=exec /bin/sh -c 'while :; do
  if curl -sf --max-time 2 http://127.0.0.1:3470/ >/dev/null; then echo ok; else echo FAIL; fi >> /run/mr-watch.log
  sleep 0.05
done'`)
	b.eventually(10*time.Second, "the watcher runs", `grep -q ok /run/mr-watch.log`)

	grewAt := time.Now()
	b.sh(`touch /srv/mr/grow-1`)
	es := b.waitEvents(40*time.Second, "memory_restart", "mr", 1)
	t.Logf("memory_restart %v after mr-1 started to grow", time.Since(grewAt).Round(100*time.Millisecond))
	b.sh(`rm /srv/mr/grow-1`)
	ev := es[0]
	mem, _ := strconv.ParseUint(ev.str("BM2_MEMORY"), 10, 64)
	if ev.str("BM2_INSTANCE") != "mr-1" || ev.str("BM2_INVOCATION") != inv1 || ev.str("PRIORITY") != "4" ||
		ev.str("BM2_MEMORY_RESTART") != strconv.Itoa(160<<20) || mem <= 160<<20 || mem >= 400<<20 || ev.str("BM2_REASON") != "memory_restart" {
		t.Errorf("memory_restart: %v", ev)
	}
	if u := ev.str("_SYSTEMD_UNIT"); u != "bm2-mr-memory.service" {
		t.Errorf("memory_restart logged by %q, want bm2's own unit", u)
	}
	b.eventually(30*time.Second, "mr-1 reloaded and confirmed",
		fmt.Sprintf(`test "$(systemctl show -P InvocationID bm2@mr-1.service)" != %q && bm2 list --json mr | grep -c '"state": "online"' | grep -qx 2 && test "$(systemctl show -P ActiveState bm2-mr-reload@1.service)" = inactive`, inv1))
	if got := b.show("bm2-mr-reload@1.service", "Result"); got != "success" {
		t.Errorf("bm2-mr-reload@1.service Result=%s:\n%s", got, b.sh(`journalctl --no-pager -u bm2-mr-reload@1.service -o cat`))
	}
	if got := b.show("bm2@mr-0.service", "InvocationID"); got != inv0 {
		t.Errorf("mr-0 was restarted too")
	}
	// The old run ended on SIGTERM, with its memory, and not by the kernel.
	if out := b.sh(`journalctl --no-pager -o cat _SYSTEMD_INVOCATION_ID=` + inv1); !strings.Contains(out, "instance 1 got SIGTERM") {
		t.Errorf("mr-1's old run did not get SIGTERM:\n%s", out)
	}
	if n := b.oomKills(); n != ooms {
		t.Errorf("the kernel's oom_kill went from %d to %d", ooms, n)
	}
	if out := b.sh(`journalctl --no-pager -o cat -u bm2@mr-1.service | grep -i 'oom' || true`); out != "" {
		t.Errorf("systemd saw an OOM kill:\n%s", out)
	}
	if out := b.sh(`cat /var/log/bm2/mr/mr-1.crash.log`); !strings.Contains(out, "reason=memory_restart") {
		t.Errorf("crash.log:\n%s", out)
	}
	b.sh(`systemctl stop mr-watch.service`)
	watch := b.sh(`cat /run/mr-watch.log`)
	if n := strings.Count(watch, "FAIL"); n != 0 || strings.Count(watch, "ok") < 20 {
		t.Errorf("%d of %d requests failed during the memory restart", n, strings.Count(watch, "\n"))
	}

	// The timer stops with the project.
	b.must(0, "/", "stop", "mr")
	if got := b.show("bm2-mr-memory.timer", "ActiveState"); got != "inactive" {
		t.Errorf("after bm2 stop, the memory timer is %s", got)
	}
}
