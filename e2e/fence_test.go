package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/sandbox"
)

// bindFrom asks the bind-probe.js instance behind url to listen on port
// (host "" for Node's default, the dual-stack [::]) and returns its
// answer: "ok <port> i=<instance>" or "<code> i=<instance>".
func (b *bed) bindFrom(url string, port int, host string) string {
	b.t.Helper()
	q := fmt.Sprintf("%s/bind?port=%d", url, port)
	if host != "" {
		q += "&host=" + host
	}
	return strings.TrimSpace(b.eventually(20*time.Second, "bind-probe answers at "+url, fmt.Sprintf(`curl -sf --max-time 5 %q`, q)))
}

// Finding 4 of issue 22: an app could listen on another project's port.
// Two projects on the real systemd; from inside the instances of the
// first, bind() of the second's port fails with EPERM, while binding
// running or stopped, on IPv4 and IPv6, while the instance's own port,
// its [sandbox] extra_ports and an ephemeral port work. A fork instance
// cannot take its neighbour's port either, and the fence holds for the
// surge instance and across an automatic restart.
func TestPortFence(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	for _, p := range []string{"fa", "fb"} {
		b.app("/srv/"+p, "bind-probe.js", "server.js")
	}
	b.write("/etc/bm2/fa.toml", `name = "fa"
script = "server.js"
cwd = "/srv/fa"
runtime = "node"
instances = 2
port = 3400
[sandbox]
extra_ports = [9229]
`)
	b.write("/etc/bm2/fb.toml", `name = "fb"
script = "server.js"
cwd = "/srv/fb"
runtime = "node"
instances = 2
port = 3500
exec_mode = "fork"
`)
	b.sh(`systemctl daemon-reload && systemctl start bm2-fa.target bm2-fb.target`)
	b.waitEvents(30*time.Second, "reuseport_confirmed", "fa", 2)
	b.waitActive(30*time.Second, "bm2@fb-0.service", "bm2@fb-1.service")

	// The instances have a cgroup v2 directory to carry the program: on
	// this host the sandbox's systemd runs in hybrid mode
	// (/sys/fs/cgroup/unified), on a unified host it is /sys/fs/cgroup.
	cg := b.show("bm2@fa-0.service", "ControlGroup")
	where := b.sh(fmt.Sprintf(`for r in /sys/fs/cgroup/unified /sys/fs/cgroup; do
  if [ "$(stat -f -c %%T $r 2>/dev/null)" = cgroup2fs ] && [ -d "$r%s" ]; then echo "$r"; exit 0; fi
done; echo "no cgroup v2 directory for %s"; exit 1`, cg, cg))
	t.Logf("bm2@fa-0's cgroup: %s%s", strings.TrimSpace(where), cg)

	fa := "http://127.0.0.1:3400"
	epermRE := regexp.MustCompile(`^EPERM i=[0-9]+$`)
	okRE := func(port int) *regexp.Regexp { return regexp.MustCompile(fmt.Sprintf(`^ok %d i=[0-9]+$`, port)) }

	t.Run("another project's port is denied", func(t *testing.T) {
		b := b.in(t)
		for _, host := range []string{"", "0.0.0.0", "127.0.0.1", "::1"} {
			if got := b.bindFrom(fa, 3500, host); !epermRE.MatchString(got) {
				t.Errorf("fa binding fb's port 3500 (host %q): %q, want EPERM", host, got)
			}
		}
		// A port nobody holds is no better.
		if got := b.bindFrom(fa, 3600, ""); !epermRE.MatchString(got) {
			t.Errorf("fa binding the free port 3600: %q, want EPERM", got)
		}
	})

	t.Run("own, extra and ephemeral ports are allowed", func(t *testing.T) {
		b := b.in(t)
		if got := b.bindFrom(fa, 9229, ""); !okRE(9229).MatchString(got) {
			t.Errorf("fa binding its extra port 9229: %q, want ok", got)
		}
		if got := b.bindFrom(fa, 9229, "127.0.0.1"); !okRE(9229).MatchString(got) {
			t.Errorf("fa binding its extra port 127.0.0.1:9229: %q, want ok", got)
		}
		if got := b.bindFrom(fa, 0, ""); !regexp.MustCompile(`^ok [1-9][0-9]* i=[0-9]+$`).MatchString(got) {
			t.Errorf("fa binding port 0: %q, want ok and a port", got)
		}
		// Its own port: allowed, so the exclusive listen meets the
		// instances' own reusePort listeners (EADDRINUSE), not the fence.
		if got := b.bindFrom(fa, 3400, ""); !strings.HasPrefix(got, "EADDRINUSE ") {
			t.Errorf("fa binding its own port 3400 exclusively: %q, want EADDRINUSE", got)
		}
	})

	t.Run("a stopped project's port cannot be squatted", func(t *testing.T) {
		b := b.in(t)
		b.sh(`systemctl stop bm2-fb.target`)
		b.eventually(20*time.Second, "fb stopped", `! ss -Htln 'sport = :3500' | grep -q .`)
		if got := b.bindFrom(fa, 3500, ""); !epermRE.MatchString(got) {
			t.Errorf("fa binding stopped fb's port 3500: %q, want EPERM", got)
		}
		// The port is free: a process outside the instance gets it.
		out := b.sh(`node -e 'const s = require("net").createServer(); s.listen({port: 3500, exclusive: true}, () => { console.log("free"); s.close(); })'`)
		if strings.TrimSpace(out) != "free" {
			t.Errorf("outside any instance, listen on 3500: %q", out)
		}
		b.sh(`systemctl start bm2-fb.target`)
		b.waitActive(30*time.Second, "bm2@fb-0.service", "bm2@fb-1.service")
	})

	t.Run("a fork instance keeps to its own port", func(t *testing.T) {
		b := b.in(t)
		fb1 := "http://127.0.0.1:3501"
		b.eventually(20*time.Second, "fb-1 answers", `curl -sf --max-time 2 `+fb1)
		if got := b.bindFrom(fb1, 3500, ""); !epermRE.MatchString(got) {
			t.Errorf("fb-1 binding fb-0's port 3500: %q, want EPERM", got)
		}
		// After an automatic restart the fence is there again (that a
		// start on a cgroup with a fence replaces it is
		// portfence.TestFenceBinds).
		// (InvocationID, not NRestarts: bm2-probe resets that once the
		// new run has lasted min_uptime_ms.)
		before := b.show("bm2@fb-1.service", "InvocationID")
		c := b.cursor()
		b.try(`curl -s --max-time 2 ` + fb1 + `/crash`)
		b.loggedSince(30*time.Second, c, "-u bm2@fb-1.service", "Scheduled restart job, restart counter is at ")
		b.eventually(30*time.Second, "fb-1 restarted", fmt.Sprintf(
			`test "$(systemctl show -P InvocationID bm2@fb-1.service)" != %q && test "$(systemctl show -P SubState bm2@fb-1.service)" = running && curl -sf --max-time 2 %s`, before, fb1))
		if got := b.bindFrom(fb1, 3500, ""); !epermRE.MatchString(got) {
			t.Errorf("fb-1 after its restart binding 3500: %q, want EPERM", got)
		}
		if got := b.bindFrom(fb1, 0, ""); !strings.HasPrefix(got, "ok ") {
			t.Errorf("fb-1 after its restart binding port 0: %q, want ok", got)
		}
	})

	t.Run("the surge instance is fenced", func(t *testing.T) {
		b := b.in(t)
		b.sh(`systemctl start bm2@fa-surge.service`)
		b.waitActive(30*time.Second, "bm2@fa-surge.service")
		// The kernel spreads connections over the three listeners: ask
		// until the surge (BM2_APP_INSTANCE=2) answers.
		out := b.eventually(30*time.Second, "the surge answers a bind", `r=$(curl -sf --max-time 2 'http://127.0.0.1:3400/bind?port=3500') && echo "$r" && test "${r#* }" = i=2`)
		if got := strings.TrimSpace(out); got != "EPERM i=2" {
			t.Errorf("the surge binding 3500: %q, want EPERM", got)
		}
		b.sh(`systemctl stop bm2@fa-surge.service`)
	})

	t.Run("status and check say so", func(t *testing.T) {
		b := b.in(t)
		out := b.must(0, "/", "status", "fa").stdout
		if want := "  ports: fenced: an instance may bind only port 3400 and extra_ports 9229 (checked on fa-0, fa-1)\n"; !strings.Contains(out, want) {
			t.Errorf("bm2 status fa lacks %q:\n%s", want, out)
		}
		out = b.must(0, "/", "status", "fb").stdout
		if want := "  ports: fenced: an instance may bind only port 3500+i (checked on fb-0, fb-1)\n"; !strings.Contains(out, want) {
			t.Errorf("bm2 status fb lacks %q:\n%s", want, out)
		}
		// A normal user cannot look at the cgroups' programs.
		out = b.sh(`cd / && runuser -u nobody -- bm2 status fa 2>/dev/null`)
		if want := "  ports: fenced at each start: an instance may bind only port 3400 and extra_ports 9229 (run as root to see the fence on the running instances)\n"; !strings.Contains(out, want) {
			t.Errorf("bm2 status fa as nobody lacks %q:\n%s", want, out)
		}
		r := b.bm2("/", "check", "fa")
		if want := "\nports: fenced at each start: an instance may bind only port 3400 and extra_ports 9229\n"; !strings.Contains(r.stdout, want) {
			t.Errorf("bm2 check fa lacks %q:\n%s", want, r.stdout)
		}
	})
}

// Where the host cannot fence (here: systemd in legacy cgroup mode, as on
// a cgroup v1 host without the unified hierarchy), the instance still
// starts, its journal says why it is not fenced, and bm2 check and bm2
// status say so in one line.
func TestPortFenceUnavailable(t *testing.T) {
	t.Parallel()
	b := newBedWith(t, sandbox.Options{Legacy: true})
	b.app("/srv/fl", "bind-probe.js", "server.js")
	b.write("/etc/bm2/fl.toml", `name = "fl"
script = "server.js"
cwd = "/srv/fl"
runtime = "node"
port = 3700
`)
	b.sh(`systemctl daemon-reload && systemctl start bm2-fl.target`)
	b.waitEvents(30*time.Second, "reuseport_confirmed", "fl", 1)
	why := "cgroup v1 host without the unified hierarchy"
	log := b.eventually(20*time.Second, "the fence step's line", `journalctl -u bm2@fl-0.service -o cat --no-pager | grep 'bm2-probe fence'`)
	if want := "bm2-probe fence: ports not fenced: " + why; !strings.Contains(log, want) {
		t.Errorf("journal of bm2@fl-0 lacks %q:\n%s", want, log)
	}
	// Not fenced indeed: the app binds a port that is not its own.
	if got := b.bindFrom("http://127.0.0.1:3700", 3800, ""); !strings.HasPrefix(got, "ok 3800 ") {
		t.Errorf("bind of 3800 without the fence: %q", got)
	}
	want := "ports: not fenced (" + why + "): an instance can bind any free port\n"
	if out := b.must(0, "/", "status", "fl").stdout; !strings.Contains(out, "  "+want) {
		t.Errorf("bm2 status fl lacks %q:\n%s", want, out)
	}
	if out := b.bm2("/", "check", "fl").stdout; !strings.Contains(out, "\n"+want) {
		t.Errorf("bm2 check fl lacks %q:\n%s", want, out)
	}
}
