package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/internal/trust"
)

// accountTable is a user and group database for tests: root, alice (in
// docker) and bob, whatever the host has.
type accountTable struct{}

var testAccounts trust.Accounts = accountTable{}

var (
	testUsers  = []trust.Account{{Name: "root"}, {Name: "alice", UID: 1000, GID: 1000}, {Name: "bob", UID: 1001, GID: 1001}}
	testGroups = []trust.Group{{Name: "root"}, {Name: "shadow", GID: 42}, {Name: "docker", GID: 999, Members: []string{"alice"}},
		{Name: "alice", GID: 1000}, {Name: "bob", GID: 1001}}
)

func (accountTable) User(name string) (trust.Account, error) {
	for _, u := range testUsers {
		if u.Name == name || strconv.Itoa(u.UID) == name {
			return u, nil
		}
	}
	return trust.Account{}, fmt.Errorf("no such user %q in the user database", name)
}

func (t accountTable) UserID(uid int) (trust.Account, error) { return t.User(strconv.Itoa(uid)) }

func (accountTable) Group(name string) (trust.Group, error) {
	for _, g := range testGroups {
		if g.Name == name || strconv.Itoa(g.GID) == name {
			return g, nil
		}
	}
	return trust.Group{}, fmt.Errorf("no such group %q in the group database", name)
}

func (t accountTable) GroupID(gid int) (trust.Group, error) { return t.Group(strconv.Itoa(gid)) }

func (accountTable) GroupIDs(a trust.Account) ([]int, error) {
	if a.Name == "alice" {
		return []int{1000, 999}, nil
	}
	return []int{a.GID}, nil
}

const aliceUID = 1000

const aliceApp = "name = \"api\"\nscript = \"server.js\"\nport = 3000\n"

// A file alice wrote asks root for more than alice's: serve and check
// refuse it, naming the file, the key and its line, and serve writes and
// starts nothing.
func TestServeRefusesWhatTheOwnerMayNotAsk(t *testing.T) {
	for _, c := range []struct {
		name, extra, want string
	}{
		{"root", `user = "root"`, `:4: user: "root" is root`},
		{"bob", `user = "bob"`, `:4: user: "bob" is another user (uid 1001)`},
		{"shadow", "user = \"alice\"\ngroup = \"shadow\"", `:5: group: "shadow" (gid 42): alice is not in it`},
		{"group root", `group = "root"`, `:4: group: "root" (gid 0): alice is not in it`},
		{"compat", "[sandbox]\nmode = \"compat\"", `:5: sandbox.mode: "compat" takes away`},
		{"writable", "[sandbox]\nwritable = [\"/etc\"]", `:5: sandbox.writable: "/etc" is outside the project's cwd`},
		{"poweroff", `wants = ["poweroff.target"]`, `:4: wants[0]: "poweroff.target" is static, not enabled`},
		{"low port", `port = 80`, `port: 80 is a privileged port`},
		{"every second", `restart_schedule = "*:*:*"`, `:4: restart_schedule: "*:*:*" fires every second, and a file alice (uid 1000) wrote may have its project restarted at most once a minute (write one value for the seconds, like "*:*:00";`},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := newTestEnv(t)
			te.speaker = aliceUID
			te.sd.set(UnitStatus{Name: "poweroff.target", ActiveState: "inactive", UnitFileState: "static"})
			data := aliceApp + c.extra + "\n"
			if c.name == "low port" {
				data = strings.Replace(aliceApp, "port = 3000\n", "", 1) + c.extra + "\n"
			}
			file := te.write("home/alice/app/bm2.toml", data)
			dir := filepath.Dir(file)

			te.mustRun(ExitInvalid, "serve", dir)
			msg := te.stderr.String()
			if !strings.Contains(msg, file) || !strings.Contains(msg, c.want) || !strings.Contains(msg, "--trust-file") {
				t.Fatalf("stderr:\n%s\nwant %s and %q and --trust-file", msg, file, c.want)
			}
			if _, err := os.Stat(filepath.Join(te.paths.ConfigDir, "api.toml")); err == nil {
				t.Fatal("serve registered the project")
			}
			for _, call := range te.sd.Calls() {
				t.Fatalf("serve called systemd: %q", call)
			}

			te.mustRun(ExitInvalid, "check", dir)
			if out := te.stdout.String(); !strings.Contains(out, "refused: "+file) || !strings.Contains(out, c.want) {
				t.Fatalf("check:\n%s", out)
			}
			// The operator's word lifts the policy.
			te.run("check", "--trust-file", dir)
			if strings.Contains(te.stdout.String(), "refused:") {
				t.Fatalf("check --trust-file still refuses:\n%s", te.stdout.String())
			}
		})
	}
}

// What alice may ask is hers: her account, her groups, the project's own
// account; the summary line says as whom the app runs.
func TestServeRunsAsTheOwner(t *testing.T) {
	te := newTestEnv(t)
	te.speaker = aliceUID
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", aliceApp+"user = \"alice\"\ngroup = \"docker\"\n"))
	te.mustRun(ExitOK, "check", dir)
	if out := te.stdout.String(); !strings.HasPrefix(out, `config ok: project "api", 1 x cluster on port 3000, runtime node, as alice:docker`+"\n") {
		t.Fatalf("check:\n%s", out)
	}
	te.mustRun(ExitOK, "serve", dir)
	if out := te.stdout.String(); !strings.Contains(out, `: project "api", 1 x cluster on port 3000, runtime node, as alice:docker`+"\n") {
		t.Fatalf("serve:\n%s", out)
	}

	te2 := newTestEnv(t)
	te2.speaker = aliceUID
	dir = filepath.Dir(te2.write("home/alice/app/bm2.toml", aliceApp))
	te2.mustRun(ExitOK, "serve", dir)
	if out := te2.stdout.String(); !strings.Contains(out, "runtime node, as bm2-api:bm2-api\n") {
		t.Fatalf("serve:\n%s", out)
	}
}

// --trust-file keeps root's freedom for a file the operator read.
func TestServeTrustFile(t *testing.T) {
	te := newTestEnv(t)
	te.speaker = aliceUID
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", aliceApp+"user = \"root\"\nwants = [\"poweroff.target\"]\n"))
	te.mustRun(ExitOK, "serve", "--trust-file", dir)
	data, _ := os.ReadFile(filepath.Join(te.paths.ConfigDir, "api.toml"))
	if !strings.Contains(string(data), "user = \"root\"\n") || !strings.Contains(string(data), "wants = [\"poweroff.target\"]\n") {
		t.Fatalf("registered:\n%s", data)
	}
	if !strings.Contains(te.stdout.String(), "as root:root\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
}

// wants and requires of enabled units from a user's file are registered
// as ordering only: nothing is pulled in.
func TestServeWantsOrderOnly(t *testing.T) {
	te := newTestEnv(t)
	te.speaker = aliceUID
	te.sd.set(UnitStatus{Name: "postgresql.service", ActiveState: "active", UnitFileState: "enabled"})
	te.sd.set(UnitStatus{Name: "redis.service", ActiveState: "active", UnitFileState: "enabled-runtime"})
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", aliceApp+"wants = [\"postgresql.service\"]\nrequires = [\"redis.service\"]\n"))
	te.mustRun(ExitOK, "check", dir)
	if out := te.stdout.String(); !strings.Contains(out, "needs: postgresql.service (wants), redis.service (requires): ordering only") {
		t.Fatalf("check:\n%s", out)
	}
	te.mustRun(ExitOK, "serve", dir)
	data, _ := os.ReadFile(filepath.Join(te.paths.ConfigDir, "api.toml"))
	if !strings.Contains(string(data), "after = [\"postgresql.service\", \"redis.service\"]\n") ||
		strings.Contains(string(data), "wants =") || strings.Contains(string(data), "requires =") {
		t.Fatalf("registered:\n%s", data)
	}
	if !strings.Contains(te.stdout.String(), "wants and requires order api after postgresql.service, redis.service only") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	// Again: the same registration, nothing changes.
	te.mustRun(ExitOK, "serve", dir)
	if !strings.Contains(te.stdout.String(), "is up to date") {
		t.Fatalf("second serve:\n%s", te.stdout.String())
	}
}

// One owner per name: alice's file that says name = "web" does not take
// the name registered from /srv/web, with or without cwd = "/srv/web";
// --replace does.
func TestServeOneOwnerPerName(t *testing.T) {
	te := newTestEnv(t)
	web := filepath.Dir(te.write("srv/web/bm2.toml", "name = \"web\"\nscript = \"server.js\"\nport = 3000\n"))
	te.mustRun(ExitOK, "serve", web)
	reg := filepath.Join(te.paths.ConfigDir, "web.toml")
	before, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	te.sd.Calls()

	te.speaker = aliceUID
	for _, extra := range []string{"", "cwd = \"" + web + "\"\n"} {
		alice := filepath.Dir(te.write("home/alice/app/bm2.toml", "name = \"web\"\nscript = \"evil.js\"\nport = 3000\n"+extra))
		te.mustRun(ExitInvalid, "serve", alice)
		msg := te.stderr.String()
		if !strings.Contains(msg, "project web is registered from "+filepath.Join(web, "bm2.toml")+" (cwd "+web+") in "+reg) ||
			!strings.Contains(msg, "--replace") {
			t.Fatalf("stderr:\n%s", msg)
		}
		if after, _ := os.ReadFile(reg); string(after) != string(before) {
			t.Fatalf("%s changed:\n%s", reg, after)
		}
		for _, c := range te.sd.Calls() {
			if c == "reload" || strings.HasPrefix(c, "start ") || strings.HasPrefix(c, "restart ") {
				t.Fatalf("serve did %q", c)
			}
		}
		te.mustRun(ExitInvalid, "check", alice)
		if !strings.Contains(te.stdout.String(), "project web is registered from") {
			t.Fatalf("check:\n%s", te.stdout.String())
		}
	}

	// A file of alice's that names web's source as its own is still where
	// it is: check warns all the same.
	spoof := te.write("home/alice/spoof/web.toml", "name = \"web\"\nscript = \"evil.js\"\ncwd = \""+web+"\"\nport = 3000\nsource = \""+filepath.Join(web, "bm2.toml")+"\"\n")
	te.run("check", spoof)
	if !strings.Contains(te.stdout.String(), "project web is registered from") {
		t.Fatalf("check of a file that claims web's source:\n%s\n%s", te.stdout.String(), te.stderr.String())
	}

	// Re-serving from the same file is allowed, and so is serving the
	// registered file itself, which keeps its source.
	te.speaker = 0
	te.mustRun(ExitOK, "serve", web)
	te.mustRun(ExitOK, "serve", reg)
	if after, _ := os.ReadFile(reg); string(after) != string(before) {
		t.Fatalf("serving %s changed it:\n%s", reg, after)
	}

	// --replace takes it over.
	te.speaker = aliceUID
	alice := filepath.Dir(te.write("home/alice/app/bm2.toml", "name = \"web\"\nscript = \"mine.js\"\nport = 3000\n"))
	te.mustRun(ExitOK, "serve", "--replace", alice)
	data, _ := os.ReadFile(reg)
	if !strings.Contains(string(data), "source = \""+filepath.Join(alice, "bm2.toml")+"\"") {
		t.Fatalf("registered:\n%s", data)
	}
}

// A registration written before bm2 recorded the source counts as coming
// from its cwd: re-serving from there changes nothing, restarts nothing.
func TestServeLegacyRegistration(t *testing.T) {
	te := newTestEnv(t)
	web := filepath.Dir(te.write("srv/web/bm2.toml", "name = \"web\"\nscript = \"server.js\"\nport = 3000\n"))
	te.write("etc/bm2/web.toml", "name = \"web\"\nscript = \"server.js\"\ncwd = \""+web+"\"\nruntime = \"node\"\nruntime_path = \""+filepath.Join(te.bin, "node")+"\"\nport = 3000\n")
	te.mustRun(ExitOK, "serve", web)
	if !strings.Contains(te.stdout.String(), "is up to date") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	other := filepath.Dir(te.write("srv/other/bm2.toml", "name = \"web\"\nscript = \"server.js\"\nport = 3000\n"))
	te.mustRun(ExitInvalid, "serve", other)
	if !strings.Contains(te.stderr.String(), "project web is registered from cwd "+web) {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

// bm2 import of an ecosystem file alice owns: an app asking for root, for
// another user or for a group alice is not in is refused before anything
// is written; the others are imported, and --serve serves what import
// validated, never the written file read again.
func TestImportAppliesThePolicy(t *testing.T) {
	testutil.Root(t)
	te := newTestEnv(t)
	te.speaker = aliceUID // what trust.Read would say of her file
	// alice runs the runtime's --version: she must reach it.
	for _, d := range []string{te.root, filepath.Dir(te.root)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(te.root, "home", "alice", "app")
	eco := te.write("home/alice/app/ecosystem.config.json", `{"apps": [
  {"name": "evil", "script": "a.js", "port": 3100, "user": "root"},
  {"name": "grp", "script": "b.js", "port": 3101, "cwd": "grp", "gid": "shadow"},
  {"name": "bobs", "script": "c.js", "port": 3102, "cwd": "bobs", "uid": "bob"},
  {"name": "ok", "script": "d.js", "port": 3103, "cwd": "ok", "gid": "docker"}
]}`)
	for _, d := range []string{"grp", "bobs", "ok"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{dir, filepath.Join(dir, "grp"), filepath.Join(dir, "bobs"), filepath.Join(dir, "ok"), eco} {
		if err := os.Chown(p, aliceUID, aliceUID); err != nil {
			t.Fatal(err)
		}
	}
	te.mustRun(ExitFailure, "import", "--serve", eco)
	msg := te.stderr.String()
	for _, want := range []string{
		`not imported: evil: ` + eco + `: user: "root" is root`,
		`not imported: grp: ` + eco + `: group: "shadow" (gid 42): alice is not in it`,
		`not imported: bobs: ` + eco + `: user: "bob" is another user`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	for _, f := range []string{"bm2.toml", "grp/bm2.toml", "bobs/bm2.toml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	for _, n := range []string{"evil", "grp", "bobs"} {
		if _, err := os.Stat(filepath.Join(te.paths.ConfigDir, n+".toml")); err == nil {
			t.Errorf("%s was registered", n)
		}
	}
	reg, err := os.ReadFile(filepath.Join(te.paths.ConfigDir, "ok.toml"))
	if err != nil || !strings.Contains(string(reg), "group = \"docker\"\n") {
		t.Fatalf("ok not registered as imported: %v\n%s\nstdout:\n%s", err, reg, te.stdout.String())
	}
	written := filepath.Join(dir, "ok", "bm2.toml")
	if n := te.reads[written]; n != 0 {
		t.Fatalf("import --serve read %s again (%d times)", written, n)
	}
	if !strings.Contains(te.stdout.String(), "as alice:docker") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}

	// --trust-file: the operator read it; root is allowed.
	te.mustRun(ExitOK, "import", "--trust-file", "--only", "evil", "--dry-run", eco)
}

// A refused file's runtime is never run: not as the account it names
// (sudo bm2 check would run alice's program as bob, in shadow, without
// the sandbox), not in its sandbox, not as anyone.
func TestCheckOfARefusedFileRunsNoRuntime(t *testing.T) {
	te := newTestEnv(t)
	te.speaker = aliceUID
	pwn := te.runtime("pwn", "v24.1.0")
	te.replaceable = map[string]string{pwn: "alice"}
	te.confined = func(p *config.Project, path string) (string, error) { return "v24.1.0", nil }
	te.lookupUser = func(name string) identity.Identity { return identity.Identity{Name: name, UID: 1001, GID: 42} }
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", aliceApp+
		"user = \"bob\"\ngroup = \"shadow\"\nruntime_path = \""+pwn+"\"\n[sandbox]\nmode = \"compat\"\n"))
	te.mustRun(ExitInvalid, "check", dir)
	out := te.stdout.String()
	if !strings.Contains(out, "runtime: version not asked: the file was refused\n") {
		t.Fatalf("check:\n%s", out)
	}
	if len(te.confinedLog)+len(te.versionLog) > 0 {
		t.Fatalf("check of a refused file ran its runtime: confined %q, as an account %q", te.confinedLog, te.versionLog)
	}
	te.mustRun(ExitInvalid, "serve", dir) // refused before the runtime is looked at
	if len(te.confinedLog)+len(te.versionLog) > 0 {
		t.Fatalf("serve of a refused file ran its runtime: confined %q, as an account %q", te.confinedLog, te.versionLog)
	}
	// The same file, vouched for, is asked (so the test can tell).
	te.run("check", "--trust-file", dir)
	if len(te.confinedLog)+len(te.versionLog) == 0 {
		t.Fatalf("check --trust-file did not ask the runtime:\n%s", te.stdout.String())
	}
}

// A privileged port among extra_ports is refused (the generator grants
// CAP_NET_BIND_SERVICE for the lowest of all), and so is after naming a
// unit not enabled, with the key and its line.
func TestRefusesExtraPortsAndAfter(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"[sandbox]\nextra_ports = [8080, 80]", `:5: sandbox.extra_ports[1]: 80 is a privileged port`},
		{`after = ["poweroff.target"]`, `:4: after[0]: "poweroff.target" is static, not enabled`},
	} {
		te := newTestEnv(t)
		te.speaker = aliceUID
		te.sd.set(UnitStatus{Name: "poweroff.target", ActiveState: "inactive", UnitFileState: "static"})
		file := te.write("home/alice/app/bm2.toml", aliceApp+c.extra+"\n")
		te.mustRun(ExitInvalid, "check", filepath.Dir(file))
		if out := te.stdout.String(); !strings.Contains(out, "refused: "+file+c.want) {
			t.Fatalf("check:\n%s\nwant %s", out, c.want)
		}
	}
}
