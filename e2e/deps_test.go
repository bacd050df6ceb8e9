package e2e

import (
	"strings"
	"testing"
	"time"
)

// A project that needs a unit (wants = [...]) starts after it, at boot as
// by hand: an app that exits at once when its database is not up yet, with
// no restarts to spare, still comes up.
func TestDependencies(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.write("/etc/systemd/system/slowdb.service", `[Unit]
Description=a database that takes 2 s to start
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'sleep 2; touch /run/slowdb-ready'
ExecStop=/bin/rm -f /run/slowdb-ready
`)
	b.write("/srv/dep/server.js", `const fs = require("node:fs");
if (!fs.existsSync("/run/slowdb-ready")) { console.error("database not ready"); process.exit(1); }
require("node:http").createServer((q, r) => r.end("dep\n"))
  .listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true }, () => console.log("dep listening"));
`)
	b.write("/srv/dep/bm2.toml", "name = \"dep\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3420\nmax_restarts = 0\nwants = [\"slowdb.service\"]\n")
	b.sh(`systemctl daemon-reload`)
	b.must(0, "/srv/dep", "serve")
	if got := strings.TrimSpace(b.sh(`curl -sf --max-time 2 http://127.0.0.1:3420/`)); got != "dep" {
		t.Fatalf("dep answered %q", got)
	}
	r := b.must(0, "/", "status", "dep")
	if !strings.Contains(r.stdout, "needs: slowdb.service (wants) active") {
		t.Errorf("bm2 status:\n%s", r.stdout)
	}

	// As at boot: both down, then the project's target starts (multi-user.target wants it).
	b.sh(`systemctl stop bm2-dep.target slowdb.service`)
	b.sh(`systemctl start --no-block bm2-dep.target`)
	b.eventually(60*time.Second, "dep-0 runs", `test "$(systemctl show -P SubState bm2@dep-0.service)" = running`)
	if n := strings.Count(b.sh(`journalctl --no-pager -o cat -u bm2@dep-0.service`), "database not ready"); n != 0 {
		t.Errorf("dep-0 started %d times before its database", n)
	}
	if st := b.show("slowdb.service", "ActiveState"); st != "active" {
		t.Errorf("slowdb is %s: wants = [...] did not pull it in", st)
	}
}
