package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// runsAs is the user and group of a running instance's main process, as
// ps shows them ("alice alice").
func (b *bed) runsAs(unit string) string {
	b.t.Helper()
	pid := strings.TrimSpace(b.show(unit, "MainPID"))
	if pid == "" || pid == "0" {
		b.t.Fatalf("%s has no main process", unit)
	}
	return strings.Join(strings.Fields(b.sh(`ps -o user=,group= -p `+pid)), " ")
}

// noProject fails unless nothing of the project was registered or
// started.
func (b *bed) noProject(name string) {
	b.t.Helper()
	if out, err := b.try(fmt.Sprintf(`ls /etc/bm2/%s.toml /etc/bm2/private/%s.toml`, name, name)); err == nil {
		b.t.Fatalf("%s was registered:\n%s", name, out)
	}
	if out := b.sh(fmt.Sprintf(`systemctl list-units --all --no-legend --plain 'bm2@%s-*' | grep -v not-found || true`, name)); strings.TrimSpace(out) != "" {
		b.t.Fatalf("units of %s:\n%s", name, out)
	}
}

// Root acts for a file's owner, never beyond (issue 22, findings 2 and
// 3), on the workflow docs/security.md describes: `cd /home/alice/app && sudo bm2
// serve`. alice's bm2.toml asking for root, bob, the shadow or root group,
// or to start poweroff.target is refused before anything is registered;
// her ecosystem file's uid and gid too (bm2 import); her name = "web"
// does not replace /srv/web's project, whose registered file stays byte
// for byte the same. What she may ask for runs as her; root's
// --trust-file and --replace still work.
func TestAFileSpeaksForItsOwner(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.sh(`useradd -m -s /bin/sh alice && useradd -m -s /bin/sh bob && chmod 0755 /home/alice`)

	// root's project web, from /srv/web.
	b.app("/srv/web", "node-server.js", "server.js")
	b.write("/srv/web/bm2.toml", "name = \"web\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3500\n\n[env]\nTOKEN = \"web's own\"\n")
	b.must(0, "/srv/web", "serve")
	webSum := b.sh(`sha256sum /etc/bm2/web.toml /etc/bm2/private/web.toml`)
	if got := b.runsAs("bm2@web-0.service"); got != "bm2-web bm2-web" {
		t.Fatalf("web runs as %q", got)
	}

	// alice's app dir, as she would write it.
	alice := func(t *testing.T, dir, toml string) {
		b := b.in(t)
		b.app(dir, "node-server.js", "server.js")
		b.write(dir+"/bm2.toml", toml)
		b.sh(`chown -R alice: ` + dir)
	}
	const app = "name = \"api\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3510\n"

	t.Run("serve refuses", func(t *testing.T) {
		b := b.in(t)
		for _, c := range []struct{ extra, want string }{
			{`user = "root"`, `bm2.toml:5: user: "root" is root`},
			{`user = "bob"`, `bm2.toml:5: user: "bob" is another user`},
			{"user = \"alice\"\ngroup = \"shadow\"", `bm2.toml:6: group: "shadow"`},
			{`group = "root"`, `bm2.toml:5: group: "root" (gid 0): alice is not in it`},
			{`wants = ["poweroff.target"]`, `bm2.toml:5: wants[0]: "poweroff.target" is `},
			{"[sandbox]\nmode = \"compat\"", `bm2.toml:6: sandbox.mode: "compat"`},
		} {
			alice(t, "/home/alice/app", app+c.extra+"\n")
			r := b.must(3, "/home/alice/app", "serve")
			if !strings.Contains(r.stderr, "/home/alice/app/"+c.want) || !strings.Contains(r.stderr, "--trust-file") {
				t.Errorf("%s: stderr:\n%s", c.extra, r.stderr)
			}
			b.noProject("api")
			r = b.must(3, "/home/alice/app", "check")
			if !strings.Contains(r.stdout, "refused: /home/alice/app/"+c.want) {
				t.Errorf("check %s:\n%s", c.extra, r.stdout)
			}
		}
		if st := strings.TrimSpace(b.sh(`systemctl is-system-running || true`)); st == "stopping" {
			t.Fatal("the system is going down")
		}
	})

	t.Run("serve as alice", func(t *testing.T) {
		b := b.in(t)
		// An enabled unit that is not running: alice's wants orders her
		// app after it and does not start it.
		b.write("/etc/systemd/system/slowdb.service", "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n")
		b.sh(`systemctl daemon-reload && systemctl enable -q slowdb.service`)
		alice(t, "/home/alice/app", app+"user = \"alice\"\nwants = [\"slowdb.service\"]\n")
		r := b.must(0, "/home/alice/app", "serve")
		if !strings.Contains(r.stdout, `project "api", 1 x cluster on port 3510, runtime node, as alice:alice`) ||
			!strings.Contains(r.stdout, "wants and requires order api after slowdb.service only") {
			t.Errorf("serve:\n%s", r.stdout)
		}
		if got := b.runsAs("bm2@api-0.service"); got != "alice alice" {
			t.Errorf("api runs as %q, want alice alice", got)
		}
		if st := b.show("slowdb.service", "ActiveState"); st != "inactive" {
			t.Errorf("slowdb.service is %s: alice's wants started it", st)
		}
		if w := b.show("bm2@api-0.service", "Wants"); strings.Contains(w, "slowdb") {
			t.Errorf("bm2@api-0 wants %s", w)
		}
		if a := b.show("bm2@api-0.service", "After"); !strings.Contains(a, "slowdb.service") {
			t.Errorf("bm2@api-0 is not ordered after slowdb.service: After=%s", a)
		}
		b.must(0, "/", "delete", "api")
	})

	t.Run("trust-file", func(t *testing.T) {
		b := b.in(t)
		alice(t, "/home/alice/app", app+"user = \"bob\"\n")
		r := b.must(0, "/home/alice/app", "serve", "--trust-file")
		if !strings.Contains(r.stdout, "as bob:bob") {
			t.Errorf("serve --trust-file:\n%s", r.stdout)
		}
		if got := b.runsAs("bm2@api-0.service"); got != "bob bob" {
			t.Errorf("api runs as %q, want bob bob (the operator vouched for it)", got)
		}
		b.must(0, "/", "delete", "api")
	})

	t.Run("import", func(t *testing.T) {
		b := b.in(t)
		b.app("/home/alice/imp/a", "node-server.js", "server.js")
		b.app("/home/alice/imp/b", "node-server.js", "server.js")
		b.app("/home/alice/imp/c", "node-server.js", "server.js")
		b.write("/home/alice/imp/ecosystem.config.json", `{"apps": [
  {"name": "ia", "cwd": "a", "script": "server.js", "env": {"PORT": 3520}, "uid": "root"},
  {"name": "ib", "cwd": "b", "script": "server.js", "env": {"PORT": 3521}, "gid": "shadow"},
  {"name": "ic", "cwd": "c", "script": "server.js", "env": {"PORT": 3522}, "exec_mode": "fork"}
]}`)
		b.sh(`chown -R alice: /home/alice/imp`)
		r := b.must(1, "/home/alice/imp", "import", "--serve")
		for _, want := range []string{`not imported: ia: ecosystem.config.json: user: "root" is root`,
			`not imported: ib: ecosystem.config.json: group: "shadow"`} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
		b.noProject("ia")
		b.noProject("ib")
		if out, err := b.try(`ls /home/alice/imp/a/bm2.toml /home/alice/imp/b/bm2.toml`); err == nil {
			t.Errorf("refused apps were written:\n%s", out)
		}
		if !strings.Contains(r.stdout, "ic online") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
		if got := b.runsAs("bm2@ic-0.service"); got != "alice alice" {
			t.Errorf("ic runs as %q, want alice alice", got)
		}
		b.must(0, "/", "delete", "ic")
	})

	t.Run("one owner per name", func(t *testing.T) {
		b := b.in(t)
		for _, extra := range []string{"", "cwd = \"/srv/web\"\n"} {
			alice(t, "/home/alice/web", "name = \"web\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3500\n"+extra)
			r := b.must(3, "/home/alice/web", "serve")
			if !strings.Contains(r.stderr, "project web is registered from /srv/web/bm2.toml (cwd /srv/web) in /etc/bm2/web.toml") {
				t.Errorf("stderr:\n%s", r.stderr)
			}
			if got := b.sh(`sha256sum /etc/bm2/web.toml /etc/bm2/private/web.toml`); got != webSum {
				t.Fatalf("web's registration changed:\n%s\nwas:\n%s", got, webSum)
			}
			if got := b.runsAs("bm2@web-0.service"); got != "bm2-web bm2-web" {
				t.Fatalf("web runs as %q", got)
			}
		}
		// Re-serving web from its own dir is still allowed.
		b.must(0, "/srv/web", "serve")
		if got := b.sh(`sha256sum /etc/bm2/web.toml /etc/bm2/private/web.toml`); got != webSum {
			t.Fatalf("re-serve changed web's registration:\n%s", got)
		}
		// Root moves the name on purpose: the project's own account, its
		// state and the rest go with it.
		alice(t, "/home/alice/web", "name = \"web\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3500\n")
		r := b.must(0, "/home/alice/web", "serve", "--replace")
		if !strings.Contains(r.stdout, "as bm2-web:bm2-web") || !strings.Contains(r.stdout, "web online") {
			t.Errorf("serve --replace:\n%s", r.stdout)
		}
		if out := b.sh(`cat /etc/bm2/web.toml`); !strings.Contains(out, `source = "/home/alice/web/bm2.toml"`) {
			t.Errorf("registered:\n%s", out)
		}
		if got := b.show("bm2@web-0.service", "WorkingDirectory"); got != "/home/alice/web" {
			t.Errorf("web runs in %q after --replace", got)
		}
	})
}

// Following bm2's advice leaves no project stuck: an app in alice's 0700
// home, served on the project's own account (refused, then --force),
// cannot enter its directory, and bm2 says that alice can; with user = "alice" it comes up, though systemd 252 left a link to the own
// account's removed runtime directory in /run/bm2 (which made every start
// fail with 233/RUNTIME_DIRECTORY). In /srv a project switches between its
// own account and alice's both ways, stopped and running: each next serve
// brings it up on the new account, and a running cluster-mode project
// restarts all at once, as its two accounts cannot share the port.
func TestAccountSwitchStartsCleanly(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.sh(`useradd -m -s /bin/sh alice`)
	const app = "name = \"ali\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3710\ninstances = 2\n"
	b.app("/home/alice/app", "node-server.js", "server.js")
	b.write("/home/alice/app/bm2.toml", app)
	b.sh(`chown -R alice: /home/alice && chmod 0700 /home/alice`)
	// serve refuses it before writing anything, naming alice; --force
	// serves it all the same, and its start fails as before.
	want := "alice, who owns it, can: `user = \"alice\"` in bm2.toml runs the app as alice"
	if r := b.must(3, "/home/alice/app", "serve"); !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("serve on the own account lacks %q:\n%s", want, r.stderr)
	}
	if r := b.must(1, "/home/alice/app", "serve", "--force"); !strings.Contains(r.stderr, want) {
		t.Fatalf("serve --force on the own account lacks %q:\n%s", want, r.stderr)
	}
	b.write("/home/alice/app/bm2.toml", app+"user = \"alice\"\n")
	b.sh(`chown -R alice: /home/alice/app`)
	if r := b.must(0, "/home/alice/app", "serve"); !strings.Contains(r.stdout, "ali online and confirmed") {
		t.Errorf("serve as alice:\n%s\n%s", r.stdout, r.stderr)
	}
	for i := range 2 {
		unit := fmt.Sprintf("bm2@ali-%d.service", i)
		if got := b.runsAs(unit); got != "alice alice" {
			t.Errorf("%s runs as %q", unit, got)
		}
	}

	// Both ways, in /srv (which the project's own account can enter).
	b.app("/srv/sw", "node-server.js", "server.js")
	const sw = "name = \"sw\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3720\ninstances = 2\n"
	serve := func(toml, as string, restart bool) {
		t.Helper()
		b.write("/srv/sw/bm2.toml", toml)
		r := b.must(0, "/srv/sw", "serve")
		if !strings.Contains(r.stdout, "sw online and confirmed") {
			t.Fatalf("serve as %s:\n%s\n%s", as, r.stdout, r.stderr)
		}
		if restart != strings.Contains(r.stdout, "its instances restart all at once") {
			t.Errorf("serve as %s (running before: %v):\n%s", as, restart, r.stdout)
		}
		for i := range 2 {
			unit := fmt.Sprintf("bm2@sw-%d.service", i)
			if got := b.runsAs(unit); got != as+" "+as {
				t.Errorf("%s runs as %q, want %s", unit, got, as)
			}
		}
		if got := strings.TrimSpace(b.sh(`curl -sf --max-time 2 http://127.0.0.1:3720/ | cut -d' ' -f1`)); got != "sw" {
			t.Errorf("port 3720 answers %q", got)
		}
	}
	serve(sw, "bm2-sw", false)
	b.must(0, "/", "stop", "sw")
	serve(sw+"user = \"alice\"\n", "alice", false) // stopped: the own account's links are gone
	serve(sw, "bm2-sw", true)                      // running
	serve(sw+"user = \"alice\"\n", "alice", true)  // running, back
	b.must(0, "/", "stop", "sw")
	serve(sw, "bm2-sw", false)
	if r := b.must(0, "/", "reload", "sw"); !strings.Contains(r.stdout, "sw reloaded: 2 instances") {
		t.Errorf("reload on the same account:\n%s", r.stdout)
	}
}
