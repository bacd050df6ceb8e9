package e2e

import (
	"strings"
	"testing"
	"time"
)

// bm2 serve refuses what bm2 check calls a problem before it writes
// anything: a port another program holds (a python3 -m http.server
// started outside bm2), and a working directory the project's own
// account certainly cannot enter. No project file, no daemon-reload, no
// unit, no state; --force goes ahead. A project whose own running
// instances hold its ports is served again as before.
func TestServeRefusesAForeignListener(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	// How many times systemd has reloaded since boot.
	loads := func() string {
		return strings.TrimSpace(b.sh(`journalctl -b --no-pager -o cat _PID=1 | grep -c '^Reloading' || true`))
	}
	nothing := func(name string) {
		b.t.Helper()
		b.sh(`test ! -e /etc/bm2/` + name + `.toml && test ! -e /etc/bm2/private/` + name + `.toml`)
		b.sh(`test ! -e /run/systemd/generator/bm2-` + name + `.target && test ! -e /run/systemd/generator/bm2@` + name + `-0.service.d`)
		if got := b.show("bm2-"+name+".target", "LoadState"); got != "not-found" {
			b.t.Errorf("bm2-%s.target is %s", name, got)
		}
		b.sh(`! ls /var/lib/bm2/errored/` + name + `* /run/bm2/errored/` + name + `* 2>/dev/null`)
	}

	b.sh(`systemd-run -q --unit=squatter /usr/bin/python3 -m http.server 3730 --bind 0.0.0.0`)
	b.eventually(20*time.Second, "the squatter listens", `ss -Hltn 'sport = :3730' | grep -q LISTEN`)
	b.app("/srv/sq", "node-server.js", "server.js")
	b.write("/srv/sq/bm2.toml", "name = \"sq\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3730\nexec_mode = \"fork\"\nstop_timeout_ms = 1000\n")

	r := b.must(3, "/srv/sq", "check")
	if out := r.stdout + r.stderr; !strings.Contains(out, "port_in_use: port 3730 is held by python3 (pid ") {
		t.Errorf("check:\n%s", out)
	}
	before := loads()
	r = b.must(3, "/srv/sq", "serve")
	for _, want := range []string{
		"bm2: port_in_use: port 3730 is held by python3 (pid ",
		"uid 0 (root), not by sq: its instances cannot listen there",
		"bm2: fix: stop that program, or give sq another `port =` in bm2.toml; then `bm2 serve` (see bm2.toml(5) ERRORED PROJECTS); `bm2 serve --force` serves it anyway\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("serve's refusal lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.stdout != "" {
		t.Errorf("serve said:\n%s", r.stdout)
	}
	nothing("sq")
	if after := loads(); after != before {
		t.Errorf("systemd reloaded: %s, then %s", before, after)
	}

	// --force: registered and started; the held port's instance is
	// errored (port_in_use), its neighbour serves.
	r = b.must(1, "/srv/sq", "serve", "--force")
	if !strings.Contains(r.stderr, "bm2: warning: port_in_use: port 3730 is held by python3 (pid ") || !strings.Contains(r.stderr, "(--force: serving anyway)") ||
		!strings.Contains(r.stderr, "instance sq-0 errored: port_in_use") {
		t.Errorf("serve --force:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	b.sh(`test -e /etc/bm2/sq.toml`)
	if after := loads(); after == before {
		t.Errorf("serve --force did not reload systemd (%s reloads)", after)
	}
	b.eventually(30*time.Second, "sq-1 serves", `curl -sf --max-time 1 http://127.0.0.1:3731/ | grep -q '^sq 1 '`)

	// Once the port is free, the project runs; serving it again while
	// its own instances hold their ports (alone: fork mode) is no
	// refusal, and check finds no problem.
	b.sh(`systemctl stop squatter`)
	b.must(0, "/", "start", "sq")
	b.eventually(30*time.Second, "sq-0 serves", `curl -sf --max-time 1 http://127.0.0.1:3730/ | grep -q '^sq 0 '`)
	if r := b.must(0, "/srv/sq", "serve"); !strings.Contains(r.stdout, "is up to date") {
		t.Errorf("serve of the running project:\n%s", r.stdout)
	}
	b.must(0, "/srv/sq", "check")
	b.write("/srv/sq/bm2.toml", "name = \"sq\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3730\nexec_mode = \"fork\"\nstop_timeout_ms = 1200\n")
	if r := b.must(0, "/srv/sq", "serve"); !strings.Contains(r.stdout, "rolling restart of sq") {
		t.Errorf("serve of the running project, changed:\n%s", r.stdout)
	}

	// A directory closed to everyone but root: the project's own
	// account, allocated at start, cannot enter it, for certain.
	b.app("/srv/shut", "node-server.js", "server.js")
	b.write("/srv/shut/bm2.toml", "name = \"shut\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3740\nexec_mode = \"fork\"\n")
	b.sh(`chmod 0700 /srv/shut`)
	r = b.must(3, "/srv/shut", "check")
	if out := r.stdout + r.stderr; !strings.Contains(out, "\ncwd_missing: shut-0 cannot start: working directory /srv/shut: permission denied (as user bm2-shut") {
		t.Errorf("check:\n%s", out)
	}
	before = loads()
	r = b.must(3, "/srv/shut", "serve")
	if !strings.HasPrefix(r.stderr, "bm2: cwd_missing: shut-0 cannot start: working directory /srv/shut: permission denied (as user bm2-shut") ||
		!strings.Contains(r.stderr, "`bm2 serve --force` serves it anyway") {
		t.Errorf("serve:\n%s", r.stderr)
	}
	nothing("shut")
	if after := loads(); after != before {
		t.Errorf("systemd reloaded: %s, then %s", before, after)
	}
	// Opened to every account, as the fix says: served.
	b.sh(`chmod 0711 /srv/shut`)
	b.must(0, "/srv/shut", "serve")
}
