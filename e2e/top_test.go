package e2e

import (
	"strings"
	"testing"
	"time"
)

// bm2 top in a real terminal (tmux): it shows every instance, its
// figures move from one second to the next, and q ends it with status 0.
func TestTop(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.need("tmux", "tmux")
	b.app("/srv/tp", "node-server.js", "server.js")
	b.write("/srv/tp/bm2.toml", "name = \"tp\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3000\n")
	b.must(0, "/srv/tp", "serve")
	b.settledProject("tp", 2)

	b.sh(`rm -f /tmp/top.rc; tmux -f /dev/null new-session -d -s top -x 140 -y 30 "env TERM=tmux-256color bm2 top; echo \$? > /tmp/top.rc"`)
	defer b.try("tmux kill-server")
	pane := func() string { return b.sh("tmux capture-pane -p -t top") }
	// A row per instance: project, ID, state.
	first := b.eventually(20*time.Second, "bm2 top shows both instances online",
		`p=$(tmux capture-pane -p -t top); echo "$p"; echo "$p" | grep -Eq '^[> ]*tp +0 +online' && echo "$p" | grep -Eq '^[> ]*tp +1 +online'`)
	for _, col := range []string{"PROJECT", "STATE", "CPU%", "MEM", "UPTIME"} {
		if !strings.Contains(first, col) {
			t.Errorf("bm2 top in 140 columns has no %s column:\n%s", col, first)
		}
	}
	// The figures move: tp 0's row (its uptime, at least) changes from
	// one second to the next. (CPU% needs systemd's CPU accounting,
	// which the sandbox's separately mounted cpu and cpuacct hierarchies
	// do not give it: "-" here.)
	row := func(pane string) string {
		for _, l := range strings.Split(pane, "\n") {
			if f := strings.Fields(strings.TrimLeft(l, "> ")); len(f) > 2 && f[0] == "tp" && f[1] == "0" {
				return l
			}
		}
		return ""
	}
	deadline := time.Now().Add(15 * time.Second)
	second := pane()
	for row(second) == row(first) {
		if time.Now().After(deadline) {
			t.Fatalf("bm2 top did not refresh tp 0's row in 15s:\n%s", first)
		}
		time.Sleep(300 * time.Millisecond)
		second = pane()
	}
	t.Logf("bm2 top:\n%s", second)
	for _, line := range strings.Split(second, "\n") {
		if len([]rune(line)) > 140 {
			t.Errorf("a line wider than the 140-column pane: %q", line)
		}
	}
	b.sh("tmux send-keys -t top q")
	b.eventually(10*time.Second, "bm2 top quits on q", `! tmux has-session -t top 2>/dev/null`)
	if rc := strings.TrimSpace(b.sh("cat /tmp/top.rc")); rc != "0" {
		t.Errorf("bm2 top exited %s after q", rc)
	}
}
