package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/runtimes"
	"github.com/bm2dev/bm2/e2e/sandbox"
	"github.com/bm2dev/bm2/internal/testutil"
)

// TestDeb builds bm2's Debian package with `make deb` and, on a fresh
// systemd where bm2 was never installed with `make install`, installs it
// with dpkg, runs a Node 24 cluster-mode project from /etc/bm2, reinstalls
// it under the running project, then removes and purges it.
//
// Without dpkg-buildpackage and debhelper (debian/build-deps.sh installs
// them) it skips, unless CI=true.
func TestDeb(t *testing.T) {
	sandbox.RequireRoot(t)
	repo := repoRoot(t)
	deb := packageOnce(t, repo)
	checkLayout(t, repo, deb)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	node, err := runtimes.Path(ctx, runtimes.Node, runtimes.Node24Version)
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	// Only the package's directory and the runtimes are visible inside,
	// read-only: not the repository, so nothing can come from the tree.
	dist, err := filepath.EvalSymlinks(filepath.Dir(deb))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The host's /dev/null must come out of the sandbox as it went in.
		if st, err := os.Stat("/dev/null"); err == nil && st.Mode().Perm() != 0o666 {
			t.Errorf("the host's /dev/null is now %v", st.Mode())
		}
	})
	m := sandbox.New(t, sandbox.Options{Binds: []string{dist + ":ro", runtimes.CacheDir() + ":ro"}})
	b := &bed{Machine: m, t: t, repo: repo}
	debIn := filepath.Join(dist, filepath.Base(deb))

	// The host this runs on comes from a Docker image whose policy-rc.d
	// forbids every service action, which deb-systemd-invoke honours (so
	// the prerm's stop would be skipped, as Debian intends). A real host
	// has none: remove it inside the sandbox's overlay.
	b.sh(`rm -f /usr/sbin/policy-rc.d`)

	const name, port = "pkgdemo", 3700
	t.Run("dpkg -i sets bm2 up", func(t *testing.T) {
		b := b.in(t)
		b.sh(`test ! -e /usr/bin/bm2 && ! id bm2 2>/dev/null && test ! -e /etc/bm2`)
		out := b.sh(fmt.Sprintf(`DEBIAN_FRONTEND=noninteractive dpkg -i %q 2>&1`, debIn))
		if strings.Contains(out, "warning") || strings.Contains(out, "error") {
			t.Errorf("dpkg -i said:\n%s", out)
		}
		b.sh(`set -e
test "$(dpkg-query -W -f '${Status}' bm2)" = "install ok installed"
# The account and the directories (sysusers.d and tmpfiles.d, by postinst).
test "$(getent passwd bm2 | cut -d: -f6)" = /var/lib/bm2
test -d /etc/bm2 && test -d /var/lib/bm2/errored && test -d /var/log/bm2
# The layout of make install with PREFIX=/usr.
test -x /usr/bin/bm2 && test -x /usr/lib/bm2/bm2-probe
# Executable, not readable by others: an app user's exec of it is non-dumpable.
test "$(stat -c %a /usr/lib/bm2/bm2-probe)" = 711
# The reusePort preload, root's and read-only beside bm2-probe.
test "$(stat -c '%a %U' /usr/lib/bm2/reuseport.cjs)" = "644 root"
test -x /usr/lib/systemd/system-generators/bm2-generator
test -f /usr/lib/systemd/system/bm2.slice && test -f /usr/lib/systemd/system/bm2@.service
grep -qx 'ExecStart=/usr/lib/bm2/bm2-probe .*' /usr/lib/systemd/system/bm2-probe@.service
# Man pages.
man -w bm2 >/dev/null && man -w 5 bm2.toml >/dev/null && man -w 8 bm2-generator >/dev/null
# Shell completion where bash, zsh and fish look for it.
test -f /usr/share/bash-completion/completions/bm2 && test -f /usr/share/zsh/vendor-completions/_bm2
test -f /usr/share/fish/vendor_completions.d/bm2.fish
# The journal catalog, in the journal's database at once (postinst).
journalctl --list-catalog | grep -q '^fef51d7506c045a3aca2d41b6586cc18 bm2: '
# sysctl.d for bm2 reload, applied at once.
test "$(sysctl -n net.ipv4.tcp_migrate_req)" = 1
# Nothing shipped is enabled or started, but the notification spool's
# path unit and the events' relay timer (enabled statically, in
# paths.target.wants/ and timers.target.wants/).
test "$(systemctl is-enabled bm2.slice)" = static
! systemctl is-active -q bm2.slice
test "$(stat -c '%a %U' /var/lib/bm2/notify)" = "700 root"
test "$(readlink /usr/lib/systemd/system/paths.target.wants/bm2-notify.path)" = ../bm2-notify.path
systemctl is-active -q bm2-notify.path
test "$(stat -c '%a %U' /run/bm2)" = "755 root" && test "$(stat -c '%a %U' /run/bm2/events)" = "700 root"
test "$(stat -c '%a %U' /run/bm2/verdicts)" = "700 root"
test "$(readlink /usr/lib/systemd/system/timers.target.wants/bm2-events.timer)" = ../bm2-events.timer
systemctl is-active -q bm2-events.timer
test "$(systemctl list-units --no-legend --plain 'bm2@*' 'bm2-*' | grep -v '^bm2-notify\.path \|^bm2-events\.timer ' | wc -l)" = 0`)
		if v := b.sh(`bm2 version`); !strings.Contains(v, "0.2.0") {
			t.Errorf("bm2 version = %q, want the package's version", v)
		}
	})

	b.sh(fmt.Sprintf(`install -m 0755 %q /usr/local/bin/node`, node))
	b.app("/srv/"+name, "node-server.js", "server.js")
	b.write("/etc/bm2/"+name+".toml", fmt.Sprintf(`name = %q
script = "server.js"
cwd = "/srv/%s"
runtime = "node"
exec_mode = "cluster"
instances = 2
port = %d
`, name, name, port))
	units := []string{fmt.Sprintf("bm2@%s-0.service", name), fmt.Sprintf("bm2@%s-1.service", name)}

	t.Run("a project runs from /etc/bm2", func(t *testing.T) {
		b := b.in(t)
		cur := b.cursor()
		b.sh(fmt.Sprintf(`systemctl daemon-reload && systemctl start bm2-%s.target`, name))
		b.waitActive(30*time.Second, units...)
		status := b.sh(fmt.Sprintf(`systemctl status --no-pager bm2@%s-0.service || true`, name))
		for _, want := range []string{"Active: active (running)", "/etc/bm2/" + name + ".toml", "50-bm2.conf"} {
			if !strings.Contains(status, want) {
				t.Errorf("systemctl status lacks %q:\n%s", want, status)
			}
		}
		// The packaged template (/lib is /usr/lib on Debian).
		if f := b.show(units[0], "FragmentPath"); !strings.HasSuffix(f, "lib/systemd/system/bm2@.service") {
			t.Errorf("%s comes from %q, want the package's bm2@.service", units[0], f)
		}
		if log := b.journalSince(cur, "-t bm2"); !strings.Contains(log, "generated 1 project (2 instances)") {
			t.Errorf("journalctl -t bm2 lacks the generator's summary:\n%s", log)
		}
		es := b.waitEvents(30*time.Second, "reuseport_confirmed", name, 2)
		seen := map[string]bool{}
		for _, e := range es {
			seen[e.str("BM2_INSTANCE")] = true
		}
		if !seen[name+"-0"] || !seen[name+"-1"] {
			t.Errorf("reuseport_confirmed for %v, want both instances", seen)
		}
		if out := b.eventually(15*time.Second, "the app answers", fmt.Sprintf(`curl -sf --max-time 2 http://127.0.0.1:%d/`, port)); !strings.HasPrefix(out, name+" ") {
			t.Errorf("port %d answered %q", port, out)
		}
		if out := b.sh(`bm2 list`); strings.Count(out, "online") != 2 {
			t.Errorf("bm2 list does not show two online instances:\n%s", out)
		}
		var rows []struct{ Project, Unit, State string }
		js := b.sh(`bm2 list --json`)
		if err := json.Unmarshal([]byte(js), &rows); err != nil {
			t.Fatalf("bm2 list --json: %v\n%s", err, js)
		}
		if len(rows) != 2 || rows[0].Project != name || rows[0].State != "online" || rows[1].State != "online" {
			t.Errorf("bm2 list --json = %s", js)
		}
	})

	t.Run("reinstalling leaves the project running", func(t *testing.T) {
		b := b.in(t)
		pids := b.sh(fmt.Sprintf(`systemctl show -P MainPID %s %s`, units[0], units[1]))
		b.sh(fmt.Sprintf(`DEBIAN_FRONTEND=noninteractive dpkg -i %q`, debIn))
		b.waitActive(5*time.Second, units...)
		if after := b.sh(fmt.Sprintf(`systemctl show -P MainPID %s %s`, units[0], units[1])); after != pids {
			t.Errorf("instances were restarted by an upgrade: main pids %q, then %q", pids, after)
		}
	})

	t.Run("dpkg -r stops the project and removes its units", func(t *testing.T) {
		b := b.in(t)
		out := b.sh(`DEBIAN_FRONTEND=noninteractive dpkg -r bm2 2>&1`)
		t.Logf("dpkg -r:\n%s", out)
		for _, u := range append(units, "bm2-"+name+".target", fmt.Sprintf("bm2-probe@%s-0.service", name)) {
			if s := b.show(u, "LoadState") + "/" + b.show(u, "ActiveState"); s != "not-found/inactive" {
				t.Errorf("%s is %s after dpkg -r, want not-found/inactive", u, s)
			}
		}
		// systemd makes up any slice it is asked about, file or not.
		if s := b.show("bm2.slice", "FragmentPath") + "/" + b.show("bm2.slice", "ActiveState"); s != "/inactive" {
			t.Errorf("bm2.slice has FragmentPath/ActiveState %s after dpkg -r, want none/inactive", s)
		}
		b.sh(fmt.Sprintf(`set -e
test "$(systemctl list-units --all --no-legend --plain 'bm2@*' 'bm2-*' 'bm2.*')" = ""
! pgrep -u bm2 >/dev/null
! curl -s --max-time 2 http://127.0.0.1:%d/
test ! -e /usr/bin/bm2 && test ! -e /usr/lib/bm2
test ! -e /usr/lib/systemd/system-generators/bm2-generator
test ! -e /usr/lib/systemd/system/bm2@.service
# The catalog forgets bm2's entries (postrm).
test ! -e /usr/lib/systemd/catalog/bm2.catalog
test ! -e /usr/share/bash-completion/completions/bm2
! journalctl --list-catalog | grep -q ' bm2: '
# What the administrator made and bm2's state are kept.
test -f /etc/bm2/%s.toml && test -d /var/lib/bm2/errored && test -d /var/log/bm2 && id bm2 >/dev/null
test "$(dpkg-query -W -f '${Status}' bm2)" = "deinstall ok config-files"`, port, name))
	})

	t.Run("dpkg -P keeps project files and the account", func(t *testing.T) {
		b := b.in(t)
		out := b.sh(`DEBIAN_FRONTEND=noninteractive dpkg -P bm2 2>&1`)
		if !strings.Contains(out, "kept /etc/bm2") {
			t.Errorf("dpkg -P does not say it kept /etc/bm2:\n%s", out)
		}
		b.sh(fmt.Sprintf(`set -e
test -f /etc/bm2/%s.toml
test ! -e /var/lib/bm2 && test ! -e /var/log/bm2
id bm2 >/dev/null
! dpkg-query -W bm2 2>/dev/null`, name))
	})

	t.Run("without a running systemd", func(t *testing.T) {
		b := b.in(t)
		// As in a chroot or an image build: no /run/systemd/system. The
		// maintainer scripts still create the account and directories, and
		// leave systemd alone. Without project files, purging leaves no
		// /etc/bm2.
		cur := b.cursor()
		b.sh(fmt.Sprintf(`set -e
rm /etc/bm2/%s.toml
userdel bm2
unshare --mount sh -ec '
mount -t tmpfs none /run/systemd
test ! -e /run/systemd/system
DEBIAN_FRONTEND=noninteractive dpkg -i %q >/dev/null
id bm2 >/dev/null && test -d /etc/bm2 && test -d /var/lib/bm2/errored && test -d /var/log/bm2
DEBIAN_FRONTEND=noninteractive dpkg -P bm2 >/dev/null
'
test ! -e /etc/bm2 && test ! -e /var/lib/bm2 && test ! -e /var/log/bm2
test ! -e /usr/bin/bm2`, name, debIn))
		if log := b.journalSince(cur, "-t systemd -t bm2"); strings.Contains(log, "Reloading") || strings.Contains(log, "generated") {
			t.Errorf("the maintainer scripts reloaded systemd although it was not running:\n%s", log)
		}
	})
}

// buildDeb runs `make deb` once and returns the path of the package.
func buildDeb(t *testing.T, repo string) string {
	t.Helper()
	needDebTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "deb")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PATH="+os.Getenv("PATH")+":/usr/local/go/bin")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make deb: %v\n%s", err, debTail(out, 8000))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	deb := lines[len(lines)-1]
	if !strings.HasSuffix(deb, ".deb") {
		t.Fatalf("make deb did not end with the package's path:\n%s", debTail(out, 4000))
	}
	if _, err := os.Stat(deb); err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(out), "== lintian"); i >= 0 {
		t.Logf("lintian:\n%s", strings.TrimSpace(string(out[i:])))
	}
	return deb
}

// checkLayout compares the package with what `make install DESTDIR=…
// PREFIX=/usr` installs: the same files with the same modes (the package
// adds only documentation), and the same bytes for everything but the
// binaries (stripped and version-stamped in the package).
func checkLayout(t *testing.T, repo, deb string) {
	t.Helper()
	inst, pkg := t.TempDir(), t.TempDir()
	if out, err := exec.Command("make", "-s", "-C", repo, "install", "DESTDIR="+inst, "PREFIX=/usr").CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if out, err := exec.Command("dpkg-deb", "-x", deb, pkg).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v\n%s", err, out)
	}
	list := func(root string) map[string]fs.FileMode {
		files := map[string]fs.FileMode{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			switch {
			case rel == ".":
				return nil
			case rel == "usr/share":
				return fs.SkipDir // documentation: only the package has it
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			files["/"+rel] = info.Mode()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	want, got := list(inst), list(pkg)
	var diffs []string
	for p, m := range want {
		switch g, ok := got[p]; {
		case !ok:
			diffs = append(diffs, "missing from the package: "+p)
		case g != m:
			diffs = append(diffs, fmt.Sprintf("%s: mode %v in the package, %v from make install", p, g, m))
		case m.IsRegular() && m&0o111 == 0:
			a, _ := os.ReadFile(filepath.Join(inst, p))
			b, _ := os.ReadFile(filepath.Join(pkg, p))
			if !bytes.Equal(a, b) {
				diffs = append(diffs, p+": differs from make install's")
			}
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, "only in the package: "+p)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("the package's layout is not make install's:\n%s", strings.Join(diffs, "\n"))
	}
}

func debTail(b []byte, n int) string {
	if len(b) > n {
		return "..." + string(b[len(b)-n:])
	}
	return string(b)
}

// debOnce builds the package once per test run: TestDeb and TestUpgrade
// share it.
var (
	debOnce sync.Once
	debPath string
	debErr  error
)

func packageOnce(t *testing.T, repo string) string {
	t.Helper()
	// Checked by every caller, before the once: a skip inside it would
	// leave the next caller an empty path.
	needDebTools(t)
	debOnce.Do(func() {
		ok := t.Run("make deb", func(t *testing.T) { debPath = buildDeb(t, repo) })
		if !ok {
			debErr = errors.New("make deb failed")
		}
	})
	if debErr != nil {
		t.Fatal(debErr)
	}
	return debPath
}

// buildOldDeb builds bm2 0.1.0's package from its source
// (e2e/testdata/bm2-0.1.0.tar.xz, the tree of the 0.1.0 release) into dir.
func buildOldDeb(t *testing.T, repo, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Outside the repository: its build-deb copies a git work tree with
	// git ls-files, and ours would hide the old tree.
	src := t.TempDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`set -eo pipefail
tar -xJf %q -C %q
cd %q/bm2-0.1.0
bash debian/build-deb %q 2>&1 | tail -1`, filepath.Join(repo, "e2e/testdata/bm2-0.1.0.tar.xz"), src, src, dir)
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+os.Getenv("PATH")+":/usr/local/go/bin")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build bm2 0.1.0: %v\n%s", err, debTail(out, 4000))
	}
	deb := strings.TrimSpace(string(out))
	if !strings.HasSuffix(deb, ".deb") {
		t.Fatalf("build bm2 0.1.0 said:\n%s", out)
	}
	return deb
}

// TestUpgradeFrom01: a host running bm2 0.1.0's package, whose project runs
// as the shared account bm2, writes into its cwd, reads its own 0600
// env_file and keeps a secret in a world-readable /etc/bm2 file, is
// upgraded to this package. The project keeps serving through the
// upgrade; afterwards bm2 status says it runs with older settings; after
// bm2 reload it runs with the new units, still as bm2, still able to do
// everything it did, and the secret is root's alone.
func TestUpgradeFrom01(t *testing.T) {
	sandbox.RequireRoot(t)
	repo := repoRoot(t)
	deb := packageOnce(t, repo)
	old := buildOldDeb(t, repo, filepath.Join(filepath.Dir(deb), "old"))
	node, err := runtimes.Path(t.Context(), runtimes.Node, runtimes.Node24Version)
	if err != nil {
		t.Fatal(err)
	}
	dist, err := filepath.EvalSymlinks(filepath.Dir(deb))
	if err != nil {
		t.Fatal(err)
	}
	m := sandbox.New(t, sandbox.Options{Binds: []string{dist + ":ro", runtimes.CacheDir() + ":ro"}})
	b := &bed{Machine: m, t: t, repo: repo}
	b.sh(`rm -f /usr/sbin/policy-rc.d`)
	b.sh(fmt.Sprintf(`set -e
DEBIAN_FRONTEND=noninteractive dpkg -i %q >/dev/null
install -m 0755 %q /usr/local/bin/node
bm2 version | grep -q 0.1.0`, filepath.Join(dist, "old", filepath.Base(old)), node))

	const secret = "legacy-secret-7"
	b.app("/srv/legacy", "env-server.js", "server.js")
	b.write("/srv/legacy/.env", "FROM_ENV_FILE=yes\n")
	b.write("/srv/legacy/bm2.toml", fmt.Sprintf("name = \"legacy\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3380\nenv_file = \".env\"\n[env]\nLEGACY_SECRET = %q\n", secret))
	b.sh(`chown -R bm2:bm2 /srv/legacy && chmod 0600 /srv/legacy/.env`)
	b.must(0, "/srv/legacy", "serve")
	check := func(when string) {
		t.Helper()
		got := b.appEnv(3380, "LEGACY_SECRET", "FROM_ENV_FILE")
		if got["LEGACY_SECRET"] != secret || got["FROM_ENV_FILE"] != "yes" {
			t.Errorf("%s: the app's environment %v", when, got)
		}
		if n := b.sh(`curl -sf --max-time 2 http://127.0.0.1:3380/cwd-write`); strings.Contains(n, "E") {
			t.Errorf("%s: the app cannot write its cwd: %s", when, n)
		}
		if u := b.sh(`ps -o user= -p "$(systemctl show -P MainPID bm2@legacy-0.service)"`); strings.TrimSpace(u) != "bm2" {
			t.Errorf("%s: runs as %q", when, u)
		}
	}
	check("on 0.1")
	b.sh(`grep -q ` + secret + ` /etc/bm2/legacy.toml && test "$(stat -c %a /etc/bm2/legacy.toml)" = 644`)
	pids := b.pids("legacy", 2)

	// Requests all through the upgrade.
	stop := make(chan struct{})
	counts := make(chan [2]int)
	go func() { ok, failed := b.serveCount("http://127.0.0.1:3380/", stop); counts <- [2]int{ok, failed} }()
	out := b.sh(fmt.Sprintf(`DEBIAN_FRONTEND=noninteractive dpkg -i %q 2>&1`, filepath.Join(dist, filepath.Base(deb))))
	time.Sleep(time.Second)
	close(stop)
	c := <-counts
	t.Logf("dpkg -i (upgrade):\n%s", out)
	if !strings.Contains(out, "migrated /etc/bm2/legacy.toml") || c[1] != 0 || c[0] == 0 {
		t.Errorf("upgrade: %d requests ok, %d failed; dpkg said:\n%s", c[0], c[1], out)
	}
	if now := b.pids("legacy", 2); now[0] != pids[0] || now[1] != pids[1] {
		t.Errorf("the upgrade restarted the instances: %v, were %v", now, pids)
	}
	reg := b.sh(`cat /etc/bm2/legacy.toml`)
	if strings.Contains(reg, secret) || !strings.Contains(reg, "user = \"bm2\"") || !strings.Contains(reg, "mode = \"compat\"") {
		t.Errorf("/etc/bm2/legacy.toml after the upgrade:\n%s", reg)
	}
	b.sh(`grep -q ` + secret + ` /etc/bm2/private/legacy.toml && test "$(stat -c %a /etc/bm2/private/legacy.toml)" = 600`)
	if st := b.sh(`bm2 status legacy`); !strings.Contains(st, "legacy-0, legacy-1: running with settings older than the unit") {
		t.Errorf("bm2 status does not say the instances need a restart:\n%s", st)
	}

	b.must(0, "/", "reload", "legacy")
	check("on 0.2 after bm2 reload")
	if now := b.pids("legacy", 2); now[0] == pids[0] || now[1] == pids[1] {
		t.Errorf("bm2 reload did not restart the instances: %v", now)
	}
	if st := b.sh(`bm2 status legacy`); strings.Contains(st, "older than the unit") {
		t.Errorf("still said to need a restart after reload:\n%s", st)
	}
	if out := b.sh(`systemctl show -p ExecStopPost bm2@legacy-0.service`); strings.Contains(out, "systemctl") {
		t.Errorf("old hooks: %s", out)
	}
}

// needDebTools skips a package test on a host without the tools `make
// deb` (and 0.1.0's build-deb) need: debian/build-deps.sh installs them.
func needDebTools(t *testing.T) {
	t.Helper()
	testutil.Commands(t, "sudo sh debian/build-deps.sh", "dpkg-buildpackage", "dh", "dh_installsysusers")
}
