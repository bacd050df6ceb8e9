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
	b.app("/srv/tp", "node-server.js", "server.js")
	b.write("/srv/tp/bm2.toml", "name = \"tp\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3000\n")
	b.must(0, "/srv/tp", "serve")
	b.settledProject("tp", 2)

	b.sh(`rm -f /tmp/top.rc; tmux -f /dev/null new-session -d -s top -x 140 -y 30 "env TERM=tmux-256color bm2 top; echo \$? > /tmp/top.rc"`)
	defer b.try("tmux kill-server")
	pane := func() string { return b.sh("tmux capture-pane -p -t top") }
	first := b.eventually(20*time.Second, "bm2 top shows both instances",
		`p=$(tmux capture-pane -p -t top); echo "$p" | grep -q 'tp-0' && echo "$p" | grep -q 'tp-1' && echo "$p"`)
	if !strings.Contains(first, "online") {
		t.Errorf("bm2 top does not say the instances are online:\n%s", first)
	}
	// Uptime (and CPU) change between frames, refreshed every second.
	deadline := time.Now().Add(15 * time.Second)
	second := pane()
	for second == first {
		if time.Now().After(deadline) {
			t.Fatalf("bm2 top did not refresh in 15s:\n%s", first)
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
