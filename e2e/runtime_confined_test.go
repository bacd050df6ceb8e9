package e2e

import (
	"strings"
	"testing"
	"time"
)

// Finding 1 and 7.1 of issue 22: root never executes a runtime that
// another user can replace. alice's runtime_path is a script that
// records who ran it and whether NoNewPrivileges= held (in /tmp: the
// bed's own when it runs on the host, a private one inside a sandbox),
// and prints that in its version.
func TestRootRunsNoReplaceableRuntime(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.sh(`useradd -m -s /bin/sh alice`)
	pwn := func(path, version string) {
		b.write(path, `#!/bin/sh
nnp=$(awk '/^NoNewPrivs/ {print $2}' /proc/self/status)
for d in /tmp /var/lib/bm2/apps/rootpwn; do echo "$(id -u) nnp=$nnp $*" >> $d/pwn-ran 2>/dev/null; done
[ "$1" = --version ] && { echo "`+version+`-uid$(id -u).nnp$nnp"; exit 0; }
exec /usr/local/bin/node "$@"
`)
		b.sh(`chmod 0755 ` + path)
	}
	pwn("/home/alice/app/pwn", "v24.1.0")
	pwn("/home/alice/old/pwn", "v20.0.0")
	b.app("/home/alice/app", "node-server.js", "server.js")
	b.app("/home/alice/old", "node-server.js", "server.js")
	b.write("/home/alice/app/bm2.toml", "name = \"pwn\"\nscript = \"server.js\"\nruntime = \"node\"\nruntime_path = \"/home/alice/app/pwn\"\nuser = \"alice\"\nport = 3700\nexec_mode = \"fork\"\n")
	b.sh(`chown -R alice: /home/alice`)
	uid := strings.TrimSpace(b.sh(`id -u alice`))
	// /tmp/pwn-ran: runs on the host; the state directory: runs as root
	// inside rootpwn's sandbox.
	ran := func() string {
		return strings.TrimSpace(b.sh(`cat /tmp/pwn-ran /var/lib/bm2/apps/rootpwn/pwn-ran 2>/dev/null || true`))
	}

	// bm2 check of alice's project, as root: her runtime answers as
	// alice, inside the project's sandbox (NoNewPrivileges=, a private
	// /tmp), never on the host.
	r := b.must(0, "/home/alice/app", "check")
	if !strings.Contains(r.stdout, "runtime: /home/alice/app/pwn v24.1.0-uid"+uid+".nnp1 (>= 24.0.0)") {
		t.Errorf("check of alice's project:\n%s%s", r.stdout, r.stderr)
	}
	if out := ran(); out != "" {
		t.Errorf("alice's runtime ran outside a sandbox:\n%s", out)
	}

	// Root's own file asks for root: the runtime alice can replace is not
	// run at all, and check refuses it as the run wrapper will.
	b.write("/etc/bm2/rootpwn.toml", "name = \"rootpwn\"\nscript = \"server.js\"\ncwd = \"/home/alice/app\"\nruntime = \"node\"\nruntime_path = \"/home/alice/app/pwn\"\nuser = \"root\"\nport = 3710\nexec_mode = \"fork\"\n")
	r = b.must(3, "/", "check", "/etc/bm2/rootpwn.toml")
	if !strings.Contains(r.stdout+r.stderr, "runtime_missing") || !strings.Contains(r.stdout, "runtime: /home/alice/app/pwn cannot be run by the app's user (it can be replaced by alice (uid "+uid+"), and bm2 runs no such binary as root") {
		t.Errorf("check of a root project on alice's runtime:\n%s%s", r.stdout, r.stderr)
	}
	if out := ran(); strings.Contains("\n"+out, "\n0 ") {
		t.Errorf("root ran alice's runtime:\n%s", out)
	}
	// Started, its run wrapper (root, in the sandbox) refuses it without
	// running it, and the exit hook confirms that without running it.
	b.sh(`systemctl daemon-reload && systemctl start bm2-rootpwn.target`)
	b.eventually(30*time.Second, "rootpwn refused", `test "$(systemctl show -P ActiveState bm2@rootpwn-0.service)" = failed`)
	es := b.waitEvents(20*time.Second, "runtime_rejected", "rootpwn", 1)
	if e := es[0]; e.str("BM2_REASON") != "runtime_missing" || !strings.Contains(e.str("MESSAGE"), "can be replaced by alice (uid "+uid+"), and bm2 runs no such binary as root") {
		t.Errorf("runtime_rejected: %v", e)
	}
	if out := ran(); strings.Contains("\n"+out, "\n0 ") {
		t.Errorf("root ran alice's runtime:\n%s", out)
	}
	b.sh(`systemctl stop bm2-rootpwn.target; systemctl reset-failed bm2@rootpwn-0.service; rm /etc/bm2/rootpwn.toml`)

	// The exit hook confirms a refusal (alice's old runtime, below the
	// floor) in the instance's sandbox too, never by running it itself.
	b.write("/etc/bm2/oldpwn.toml", "name = \"oldpwn\"\nscript = \"server.js\"\ncwd = \"/home/alice/old\"\nruntime = \"node\"\nruntime_path = \"/home/alice/old/pwn\"\nuser = \"alice\"\nport = 3720\nexec_mode = \"fork\"\n")
	b.sh(`systemctl daemon-reload && systemctl start bm2-oldpwn.target`)
	b.eventually(30*time.Second, "oldpwn refused", `test "$(systemctl show -P ActiveState bm2@oldpwn-0.service)" = failed`)
	es = b.waitEvents(20*time.Second, "runtime_rejected", "oldpwn", 1)
	if e := es[0]; e.str("BM2_REASON") != "runtime_below_floor" || e.str("_UID") != "0" || !strings.Contains(e.str("MESSAGE"), "v20.0.0-uid"+uid+".nnp1") {
		t.Errorf("runtime_rejected: %v", e)
	}
	if out := ran(); out != "" {
		t.Errorf("a hook ran alice's runtime outside the instance's sandbox:\n%s", out)
	}
}
