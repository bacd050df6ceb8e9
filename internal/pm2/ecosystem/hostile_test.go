package ecosystem

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/pm2/convert"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/internal/trust"
)

// hostile is an ecosystem file that tries what an ecosystem file must not
// get to do when root runs bm2 import, and reports, in its apps' env, how
// each try went.
const hostile = `const fs = require("node:fs");
const r = {};
const tryIt = (k, f) => { try { f(); r[k] = "ok"; } catch (e) { r[k] = e.code || String(e); } };
tryIt("WRITE", () => fs.writeFileSync(%q, "written"));
tryIt("WRITE_ROOT", () => fs.writeFileSync("/root/bm2-import-marker", "written"));
tryIt("SPAWN", () => require("node:child_process").execSync("touch %s"));
tryIt("ROOT", () => fs.readdirSync("/root"));
r.UID = String(process.getuid());
r.GID = String(process.getgid());
r.HAS_SSH = String("SSH_AUTH_SOCK" in process.env);
r.STDIN = (() => { try { return String(fs.readFileSync(0).length); } catch (e) { return e.code; } })();
module.exports = { apps: [{ name: "hostile", script: "x.js", env: { PORT: 3000, ...r } }] };
`

// requireRoot skips a test that needs root: it checks that bm2 import,
// run as root, evaluates an ecosystem file as its owner.
func requireRoot(t *testing.T) {
	t.Helper()
	testutil.Root(t)
}

// tempUser creates a system user for one test and removes it after.
func tempUser(t *testing.T) *user.User {
	name := fmt.Sprintf("bm2imp%d", os.Getpid()%100000)
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func envOf(t *testing.T, src convert.Source) map[string]string {
	t.Helper()
	if len(src.Apps) != 1 {
		t.Fatalf("%d apps", len(src.Apps))
	}
	v, _ := src.Apps[0].Get("env")
	o, ok := v.(*convert.Object)
	if !ok {
		t.Fatalf("env is %T", v)
	}
	out := map[string]string{}
	for _, k := range o.Keys {
		out[k] = fmt.Sprint(o.Values[k])
	}
	return out
}

// As root, a hostile ecosystem file runs as its owner, in Node's
// permission model: it cannot write a file (not even where its owner
// may), start a process or read /root, and it sees none of root's
// environment and no standard input.
func TestHostileFileRunsAsItsOwner(t *testing.T) {
	requireRoot(t)
	dirs := nodeDirs(t)
	u := tempUser(t)
	dir, err := os.MkdirTemp("", "bm2-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var uid, gid int
	fmt.Sscan(u.Uid, &uid)
	fmt.Sscan(u.Gid, &gid)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	marker, spawned := filepath.Join(dir, "written"), filepath.Join(dir, "spawned")
	file := filepath.Join(dir, "ecosystem.config.js")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(hostile, marker, spawned)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(file, uid, gid); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", "/tmp/root-agent.sock")
	src, ev, err := Load(context.Background(), file, Options{Dirs: dirs})
	if err != nil {
		t.Fatal(err)
	}
	if ev.As != u.Username {
		t.Errorf("evaluated as %q, want the file's owner %q", ev.As, u.Username)
	}
	env := envOf(t, src)
	want := map[string]string{
		"UID": u.Uid, "GID": u.Gid, "WRITE": "ERR_ACCESS_DENIED", "WRITE_ROOT": "ERR_ACCESS_DENIED",
		"SPAWN": "ERR_ACCESS_DENIED", "ROOT": "EACCES", "HAS_SSH": "false", "STDIN": "0",
	}
	for k, w := range want {
		if env[k] != w {
			t.Errorf("%s = %q, want %q (all: %v)", k, env[k], w, env)
		}
	}
	for _, f := range []string{marker, spawned, "/root/bm2-import-marker"} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s exists: the ecosystem file wrote it", f)
			os.Remove(f)
		}
	}
}

// A file root owns is evaluated as nobody, never as root.
func TestRootsFileRunsAsNobody(t *testing.T) {
	requireRoot(t)
	dirs := nodeDirs(t)
	dir := publicTempDir(t)
	file := filepath.Join(dir, "ecosystem.config.js")
	os.WriteFile(file, []byte(`module.exports = { apps: [{ name: "a", script: "a.js", env: { PORT: 1, UID: String(process.getuid()) } }] };`), 0o644)
	src, ev, err := Load(context.Background(), file, Options{Dirs: dirs})
	if err != nil {
		t.Fatal(err)
	}
	if got := envOf(t, src)["UID"]; got != "65534" {
		t.Errorf("evaluated as uid %s (%s), want nobody (65534)", got, ev.As)
	}
}

// Errors name the file and say what went wrong; a file that never
// finishes is stopped at the deadline.
func TestLoadErrors(t *testing.T) {
	dirs := nodeDirs(t)
	dir := publicTempDir(t)
	cases := []struct{ name, text, want string }{
		{"syntax.config.js", "module.exports = {", "SyntaxError"},
		{"throws.config.js", `throw new Error("no database")`, "no database"},
		{"spawns.config.js", `require("node:child_process").execSync("id"); module.exports = {}`, "does not allow"},
		{"loop.config.js", `while (true) {}`, "no result within 1s"},
		{"nothing.config.js", `module.exports = undefined`, "not its apps"},
		{"pending.config.js", `module.exports = new Promise(() => setInterval(() => {}, 1000))`, "no result within 1s"},
		{"bad.yaml", "apps: [\n  - name: x\n", "not YAML"},
		{"notes.txt", "hello", "not an ecosystem file"},
		// Empty and broken files are said to be so, with the line.
		{"empty.json", " \n", "empty.json is empty: an ecosystem file describes its apps"},
		{"empty.config.js", "", "empty.config.js is empty"},
		{"blank.yaml", "\n\n", "blank.yaml is empty"},
		{"exports-nothing.config.js", "// to do\n", "has no apps: its value is an empty object"},
		{"broken.json", "{\n  apps: [\n    { name: \"a\" script: \"a.js\" }\n  ]\n}\n",
			"broken.json is broken at line 3: SyntaxError: Unexpected identifier 'script' (evaluated by node v24.",
		},
		{"broken.config.js", "module.exports = {\n  apps: [\n    { name: \"a\" script: \"a.js\" }\n  ]\n};\n",
			"broken.config.js is broken at line 3: SyntaxError: Unexpected identifier 'script'"},
		{"broken.config.mjs", "export default {\n  apps: [\n    { name: \"a\" script: \"a.js\" }\n  ]\n};\n",
			"broken.config.mjs is broken at line 3: SyntaxError: Unexpected identifier 'script'"},
		{"broken-esm.config.js", "const x = 1;\nexport default {\n  apps: [\n    { name: \"a\" script: \"a.js\" }\n  ]\n};\n",
			"broken-esm.config.js is broken at line 4: SyntaxError: Unexpected identifier 'script'"},
		{"short.json", "{\n  apps: [\n    { name: \"a\", script: \"a.js\" },\n", "short.json is broken: it ends before its value does"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, c.name)
			os.WriteFile(file, []byte(c.text), 0o644)
			start := time.Now()
			_, _, err := Load(context.Background(), file, Options{Dirs: dirs, Timeout: time.Second})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), file) {
				t.Errorf("error %v, want one naming %s and saying %q", err, file, c.want)
			}
			if strings.Contains(c.want, "line 3") || strings.Contains(c.want, "line 4") {
				// The line, and a caret under what is wrong.
				if want := "|     { name: \"a\" script: \"a.js\" }\n    |                 ^^^^^^"; err != nil && !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want the line and a caret:\n%s", err, want)
				}
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
}

// A file the ecosystem file loads is named when it is the one that is
// broken, a CommonJS one as an ES module.
func TestLoadNamesTheBrokenFile(t *testing.T) {
	dirs := nodeDirs(t)
	dir := publicTempDir(t)
	for name, text := range map[string]string{
		"eco.config.js":   "module.exports = {\n  apps: require(\"./apps.js\")\n};\n",
		"apps.js":         "module.exports = [\n  { name: \"a\" script: \"a.js\" }\n];\n",
		"eco.config.mjs":  "import apps from \"./apps.mjs\";\nexport default { apps };\n",
		"apps.mjs":        "export default [\n  { name: \"a\" script: \"a.js\" }\n];\n",
		"parse.config.js": "module.exports = { apps: [{ name: \"a\", script: \"a.js\", env: JSON.parse(\"{x\") }] };\n",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	for eco, want := range map[string]string{
		"eco.config.js":  "/apps.js, which eco.config.js loads, is broken at line 2: SyntaxError: Unexpected identifier 'script'",
		"eco.config.mjs": "/apps.mjs, which eco.config.mjs loads, is broken at line 2: SyntaxError: Unexpected identifier 'script'",
		// Thrown by its code: not broken, and said where.
		"parse.config.js": ") (at Object.<anonymous> (" + dir + "/parse.config.js:1:",
	} {
		_, _, err := Load(context.Background(), filepath.Join(dir, eco), Options{Dirs: dirs})
		if err == nil || !strings.Contains(err.Error(), want) || eco == "parse.config.js" && strings.Contains(err.Error(), "broken") {
			t.Errorf("%s: %v, want %q", eco, err, want)
		}
		if strings.Contains(want, "line 2") && (err == nil || !strings.Contains(err.Error(), "\n  2 |   { name: \"a\" script: \"a.js\" }\n    |               ^^^^^^")) {
			t.Errorf("%s: %v, want the line and a caret", eco, err)
		}
	}
}

// Without a Node.js 24, a JavaScript file is not evaluated, and the error
// says which node was found.
func TestLoadNeedsNode24(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ecosystem.config.js")
	os.WriteFile(file, []byte(`module.exports = {}`), 0o644)
	_, _, err := Load(context.Background(), file, Options{Dirs: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "needs Node.js 24") {
		t.Errorf("error %v", err)
	}
}

// publicTempDir is a temporary directory every user can enter (the file's
// owner, or nobody, evaluates in it).
func publicTempDir(t *testing.T) string {
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	return dir
}

// A file no single user could have written (here: its group may write
// it) is evaluated as nobody, never as its owner; and what is evaluated
// is the bytes that were read and judged, not the file read again.
func TestSharedFileRunsAsNobodyFromTheBytesRead(t *testing.T) {
	requireRoot(t)
	dirs := nodeDirs(t)
	dir := publicTempDir(t)
	const alice = 42001
	if err := os.Chown(dir, alice, alice); err != nil {
		t.Fatal(err)
	}
	text := `module.exports = { apps: [{ name: "a", script: "a.js", env: { PORT: 1, UID: String(process.getuid()), FROM: "read" } }] };`
	file := filepath.Join(dir, "ecosystem.config.js")
	for _, mode := range []os.FileMode{0o644, 0o664} {
		os.WriteFile(file, []byte(text), mode)
		os.Chown(file, alice, 4242) // a group that is not alice's own
		os.Chmod(file, mode)
		read := func(path string) (trust.File, error) {
			f, err := trust.Read(path, trust.System())
			// The file changes once it was read: what runs must not.
			os.WriteFile(file, []byte(strings.Replace(text, `"read"`, `"swapped"`, 1)), mode)
			return f, err
		}
		src, ev, err := Load(context.Background(), file, Options{Dirs: dirs, Read: read})
		if err != nil {
			t.Fatal(err)
		}
		env := envOf(t, src)
		want := "42001"
		if mode&0o020 != 0 {
			want = "65534"
		}
		if env["UID"] != want || env["FROM"] != "read" {
			t.Errorf("mode %o: evaluated as uid %s (%s) from %q, want uid %s from the bytes read", mode, env["UID"], ev.As, env["FROM"], want)
		}
	}
}

// A file root owns in a directory only root may enter (/root, a
// mktemp -d) is evaluated all the same, as nobody, from outside the
// directory: its process.cwd() still says the directory, and what it
// loads from there cannot be read (the error says why). In a directory
// nobody may enter, it runs there, and loads what it may read.
func TestEvaluatesInADirectoryItCannotEnter(t *testing.T) {
	requireRoot(t)
	dirs := nodeDirs(t)
	closed := t.TempDir()
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	open := publicTempDir(t)
	const app = `{ name: "a", script: "a.js", port: 1, env: { CWD: process.cwd(), DIR: __dirname, DIST: require("node:path").resolve("dist") } }`
	files := map[string]string{
		"cjs.config.js":  "module.exports = { apps: [" + app + "] };\n",
		"esm.config.mjs": "export default { apps: [" + strings.ReplaceAll(app, "__dirname", "import.meta.dirname") + "] };\n",
		"req.config.js":  "module.exports = { apps: require(\"./apps.js\") };\n",
		"apps.js":        "module.exports = [" + app + "];\n",
		"loose.json":     "{ apps: [{ name: 'a', script: 'a.js', port: 1 }] }\n",
	}
	for _, dir := range []string{closed, open} {
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"cjs.config.js", "esm.config.mjs", "req.config.js", "loose.json"} {
			file := filepath.Join(dir, name)
			src, ev, err := Load(context.Background(), file, Options{Dirs: dirs})
			if dir == closed && name == "req.config.js" {
				if err == nil || !strings.Contains(err.Error(), "nobody (the file is root's) cannot enter "+closed+", so what the file loads from there cannot be read") {
					t.Errorf("%s: %v, want an error saying nobody cannot enter %s", file, err, closed)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			if want := map[bool]string{true: closed}[dir == closed && name != "loose.json"]; ev.Closed != want {
				t.Errorf("%s: Closed %q, want %q", file, ev.Closed, want)
			}
			if name == "loose.json" {
				continue
			}
			env := envOf(t, src)
			if env["CWD"] != dir || env["DIR"] != dir || env["DIST"] != dir+"/dist" {
				t.Errorf("%s: cwd %q, dirname %q, resolve(\"dist\") %q; want %s", file, env["CWD"], env["DIR"], env["DIST"], dir)
			}
		}
	}
}
