package cli

import (
	"github.com/bm2dev/bm2/internal/testutil"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode"

	"github.com/bm2dev/bm2/internal/config"
)

// initDir runs bm2 init in dir (under te's root) and returns the file it
// wrote, after checking that it parses as bm2 serve would parse it.
func initDir(t *testing.T, te *testEnv, dir string, args ...string) string {
	t.Helper()
	abs := filepath.Join(te.root, dir)
	te.mustRun(ExitOK, append([]string{"init", abs}, args...)...)
	data, err := os.ReadFile(filepath.Join(abs, "bm2.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse(filepath.Join(abs, "bm2.toml"), data, config.Options{Cwd: abs, AnyName: true, NumCPU: 2}); err != nil {
		t.Fatalf("bm2 init wrote a file that does not parse: %v\n%s", err, data)
	}
	for _, r := range string(data) {
		if r != '\n' && (unicode.IsControl(r) || r > 0x7e) {
			t.Fatalf("bm2 init wrote %q:\n%s", r, data)
		}
	}
	return string(data)
}

func hasLines(t *testing.T, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains("\n"+text, "\n"+l) {
			t.Errorf("lacks a line starting %q:\n%s", l, text)
		}
	}
}

func lacks(t *testing.T, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(text, s) {
			t.Errorf("has %q:\n%s", s, text)
		}
	}
}

// A Node.js app written for PM2: its name from package.json, its script
// from main, its port from the code, the preload for reusePort, [env]
// from scripts.start; and bm2 check takes the result.
func TestInitNodeApp(t *testing.T) {
	te := newTestEnv(t)
	te.write("srv/shop/package.json", `{"name": "@acme/Shop API", "main": "./server.js",
		"scripts": {"start": "NODE_ENV=production node server.js"}, "engines": {"node": ">=24"}}`)
	te.write("srv/shop/server.js", "const express = require('express');\nconst app = express();\n"+
		"const port = process.env.PORT || 8080;\napp.listen(port, () => console.log('up'));\n")
	got := initDir(t, te, "srv/shop")
	hasLines(t, got,
		`name = "shop-api"          # from package.json "name": "@acme/Shop API"`,
		`script = "server.js"       # from package.json "main"`,
		`runtime = "node"           # from scripts.start, which runs node`,
		"port = 8080                # from server.js: `process.env.PORT || 8080`",
		`port_env = ["PORT"]`,
		`reuseport = "preload"      # server.js: .listen() without reusePort; bm2 adds it, no code change`,
		`# instances = 1`,
		`# exec_mode = "cluster"`,
		`[env]`,
		`NODE_ENV = "production"`,
	)
	if os.Geteuid() == 0 {
		// (Run by another user, the test's directory, closed to others,
		// is theirs, and user names them: TestInitClosedHome.)
		hasLines(t, got, `# user = "www-data"        # default: an account of its own, bm2-shop-api`)
	}
	out := te.stdout.String()
	for _, want := range []string{
		"wrote " + filepath.Join(te.root, "srv/shop/bm2.toml") + `: project "shop-api", 1 x cluster on port 8080, runtime node` + "\n",
		"  reuseport = \"preload\"",
		"\nnext: `bm2 check " + filepath.Join(te.root, "srv/shop") + "` checks it, ",
		"bm2 serve " + filepath.Join(te.root, "srv/shop") + "` registers the project and starts it",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	te.mustRun(ExitOK, "check", filepath.Join(te.root, "srv/shop"))
}

// A Bun app in TypeScript, as bun init makes it: the script from
// "module", Bun from its lock file, Bun.serve's default port from PORT.
func TestInitBunApp(t *testing.T) {
	te := newTestEnv(t)
	te.write("srv/hello/package.json", `{"name": "hello", "module": "index.ts", "type": "module", "devDependencies": {"@types/bun": "latest"}}`)
	te.write("srv/hello/bun.lock", "{}\n")
	te.write("srv/hello/index.ts", "Bun.serve({\n  fetch(req) { return new Response('hi'); },\n});\n")
	got := initDir(t, te, "srv/hello")
	hasLines(t, got,
		`script = "index.ts"        # from package.json "module"`,
		`runtime = "bun"            # from the bun.lock file here`,
		`port = 3000                # Bun.serve's default (index.ts: Bun.serve() names no port), from PORT`,
		`port_env = ["PORT"]`,
		`reuseport = "preload"      # index.ts: Bun.serve() without reusePort; bm2 adds it, no code change`,
	)
	lacks(t, te.stdout.String(), "guess")

	// Without package.json: the entry file found by its name, Bun for
	// TypeScript, the port of an export default { port, fetch }.
	te.write("srv/edge/src/index.ts", "export default {\n  port: 4100,\n  fetch(req: Request) { return new Response('ok'); },\n};\n")
	got = initDir(t, te, "srv/edge")
	hasLines(t, got,
		`name = "edge"              # from the directory's name`,
		`script = "src/index.ts"    # the first of index.js, server.js, app.js, ... found here`,
		`runtime = "bun"            # from the .ts extension: Bun runs TypeScript as it is`,
		"port = 4100                # from src/index.ts: `export default { port: 4100`, fixed in the code",
		`reuseport = "preload"`,
	)
	lacks(t, got, "port_env =")

	// Bun.serve on PORT with no default: a guess, said as one.
	te.write("srv/onport/package.json", `{"name": "onport", "module": "index.ts"}`)
	te.write("srv/onport/bun.lock", "{}\n")
	te.write("srv/onport/index.ts", "Bun.serve({ port: Number(process.env.PORT), fetch: () => new Response('ok') });\n")
	got = initDir(t, te, "srv/onport")
	hasLines(t, got,
		`port = 3000                # a guess: index.ts listens on a port the code does not name`,
		`port_env = ["PORT"]        # index.ts reads its port from PORT: bm2 sets it`,
		`reuseport = "preload"`,
	)
	if !strings.Contains(te.stdout.String(), "note: port 3000 is a guess") {
		t.Errorf("output:\n%s", te.stdout.String())
	}

	// Elysia listens through Bun.serve: the preload reaches it.
	te.write("srv/ely/package.json", `{"name": "ely", "module": "src/index.ts", "engines": {"bun": ">=1.4"}}`)
	te.write("srv/ely/src/index.ts", "import { Elysia } from 'elysia';\nnew Elysia().get('/', () => 'hi').listen(3200);\n")
	got = initDir(t, te, "srv/ely")
	hasLines(t, got,
		`runtime = "bun"            # from package.json engines.bun`,
		"port = 3200                # from src/index.ts: `.listen(3200`, fixed in the code",
		`reuseport = "preload"      # src/index.ts: elysia (Bun.serve) without reusePort; bm2 adds it, no code change`,
	)
}

// Express under Bun cannot share a port (Bun's node:http ignores
// reusePort): fork mode, saying why. The port is found in a file the
// entry imports.
func TestInitBunExpressIsFork(t *testing.T) {
	te := newTestEnv(t)
	te.write("srv/exp/package.json", `{"name": "exp", "scripts": {"start": "bun run src/server.ts"}}`)
	te.write("srv/exp/src/server.ts", "import express from 'express';\nimport { port } from './config.js';\nexpress().listen(port);\n")
	te.write("srv/exp/src/config.ts", "export const port = Number(process.env.PORT ?? 4000);\n")
	got := initDir(t, te, "srv/exp")
	hasLines(t, got,
		`script = "src/server.ts"   # from package.json scripts.start: "bun run src/server.ts"`,
		`runtime = "bun"            # from scripts.start, which runs bun`,
		"port = 4000                # from src/config.ts: `process.env.PORT ?? 4000`",
		`# Fork mode: src/server.ts serves through express, and under Bun`,
		`exec_mode = "fork"         # instance i on port+i`,
	)
	lacks(t, got, "reuseport =", `# exec_mode = "cluster"`)

	// The same app under Node.js: cluster mode with the preload.
	te.write("srv/expnode/package.json", `{"name": "expnode", "scripts": {"start": "node src/server.js"}}`)
	te.write("srv/expnode/src/server.js", "const express = require('express');\nconst { port } = require('./config');\nexpress().listen(port);\n")
	te.write("srv/expnode/src/config.js", "exports.port = process.env.PORT || 4010;\n")
	got = initDir(t, te, "srv/expnode")
	hasLines(t, got, `runtime = "node"`, "port = 4010                # from src/config.js: `process.env.PORT || 4010`", `reuseport = "preload"`)
}

// An app that sets reusePort itself keeps it: no preload. tsx runs it
// on Node.js through its loader.
func TestInitReusePortAndTsx(t *testing.T) {
	te := newTestEnv(t)
	te.write("srv/api/package.json", `{"name": "api", "main": "dist/index.js", "scripts": {"build": "tsc", "start": "tsx src/index.ts"}}`)
	te.write("srv/api/src/index.ts", "import http from 'node:http';\nhttp.createServer().listen({ port: 5000, reusePort: true });\n")
	got := initDir(t, te, "srv/api")
	hasLines(t, got,
		`script = "src/index.ts"    # from package.json scripts.start: "tsx src/index.ts"`,
		`runtime = "node"           # from scripts.start, which runs tsx (Node.js)`,
		`runtime_args = ["--import", "tsx"]`,
		"port = 5000                # from src/index.ts: `.listen({ port: 5000`, fixed in the code",
		"# reuseport = \"app\"        # the default: src/index.ts listens with `reusePort: true` itself",
	)
}

// A script package.json names but a build has not made yet: written all
// the same, saying so, unless an entry file is there.
func TestInitScriptNotBuilt(t *testing.T) {
	te := newTestEnv(t)
	te.write("srv/nest/package.json", `{"name": "nest", "main": "dist/main.js", "scripts": {"start": "nest start"}}`)
	te.write("srv/nest/tsconfig.json", "{}\n")
	got := initDir(t, te, "srv/nest")
	hasLines(t, got,
		"# dist/main.js does not exist yet: build the app before bm2 serve.",
		`script = "dist/main.js"    # from package.json "main"`,
		"# A worker, for now: bm2 init could not read dist/main.js, so it found no port.",
	)
	if !strings.Contains(te.stdout.String(), "note: dist/main.js, the script, does not exist yet: build the app before bm2 serve") {
		t.Errorf("output:\n%s", te.stdout.String())
	}

	te.write("srv/nest2/package.json", `{"name": "nest2", "main": "dist/main.js"}`)
	te.write("srv/nest2/src/main.ts", "const app = await NestFactory.create(AppModule);\nawait app.listen(process.env.PORT ?? 3000);\n")
	got = initDir(t, te, "srv/nest2")
	hasLines(t, got,
		`# package.json "main" names dist/main.js, which does not exist (yet: a build makes it?).`,
		`script = "src/main.ts"`,
		"port = 3000                # from src/main.ts: `process.env.PORT ?? 3000`",
	)
}

// No sign of listening: a worker, with the port commented out and a
// comment that says so.
func TestInitWorker(t *testing.T) {
	te := newTestEnv(t)
	te.write("srv/jobs/package.json", `{"name": "jobs", "main": "worker.js"}`)
	te.write("srv/jobs/worker.js", "const q = require('./queue');\nsetInterval(() => q.poll(), 1000);\n")
	te.write("srv/jobs/queue.js", "exports.poll = () => {};\n")
	got := initDir(t, te, "srv/jobs")
	hasLines(t, got,
		"# A worker: no port. Nothing in worker.js and the file it imports listens",
		"# port = 3000",
		`# port_env = ["PORT"]`,
	)
	lacks(t, got, "\nport =", "exec_mode", "reuseport")
	if !strings.Contains(te.stdout.String(), `project "jobs", 1 x worker (no port), runtime node`) {
		t.Errorf("output:\n%s", te.stdout.String())
	}
}

// A directory with a bm2.toml is left alone, with what to type instead;
// --force replaces it. A directory with no script is refused.
func TestInitRefuses(t *testing.T) {
	te := newTestEnv(t)
	te.write("srv/api/server.js", "require('http').createServer().listen(process.env.PORT || 3000);\n")
	file := te.write("srv/api/bm2.toml", "name = \"api\"\nscript = \"server.js\"\nport = 3000\n")
	dir := filepath.Dir(file)
	te.mustRun(ExitFailure, "init", dir)
	for _, want := range []string{"init: " + file + " exists already", "`bm2 check " + dir + "`", "bm2 serve " + dir + "`", "`bm2 init --force`"} {
		if !strings.Contains(te.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, te.stderr.String())
		}
	}
	if data, _ := os.ReadFile(file); string(data) != "name = \"api\"\nscript = \"server.js\"\nport = 3000\n" {
		t.Errorf("bm2.toml changed:\n%s", data)
	}
	got := initDir(t, te, "srv/api", "--force", "--name", "web")
	hasLines(t, got, `name = "web"               # from --name`, "port = 3000")

	te.write("srv/empty/README.md", "nothing to run\n")
	te.mustRun(ExitFailure, "init", filepath.Join(te.root, "srv/empty"))
	if !strings.Contains(te.stderr.String(), "no script found") {
		t.Errorf("stderr:\n%s", te.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(te.root, "srv/empty/bm2.toml")); err == nil {
		t.Error("a bm2.toml was written without a script")
	}
	te.mustRun(ExitUsage, "init", filepath.Join(te.root, "srv/api/server.js"))
	te.mustRun(ExitUsage, "init", filepath.Join(te.root, "srv/nowhere"))
	te.mustRun(ExitUsage, "init", "--name", "Not A Name", filepath.Join(te.root, "srv/api"))
}

// package.json is data from whoever wrote the app: read as JSON, at most
// 1 MiB, through no link; names, paths and words from it are made safe
// before they reach the file or a terminal.
func TestInitUntrustedPackage(t *testing.T) {
	te := newTestEnv(t)
	// A link in package.json's place is not followed.
	secret := te.write("secret.json", `{"name": "secret", "main": "s.js"}`)
	te.write("srv/link/index.js", "setInterval(() => {}, 1000);\n")
	if err := os.Symlink(secret, filepath.Join(te.root, "srv/link/package.json")); err != nil {
		t.Fatal(err)
	}
	got := initDir(t, te, "srv/link")
	hasLines(t, got, `name = "link"`, `script = "index.js"`)
	if !strings.Contains(te.stdout.String(), "note: package.json not read: read package.json: a symbolic link, which bm2 init does not follow") {
		t.Errorf("output:\n%s", te.stdout.String())
	}

	// Control characters, a path out of the directory, an env value
	// with a bell in it.
	te.write("srv/evil/package.json", `{"name": "\u001b[31mEvil\nApp", "main": "../../etc/passwd",
		"scripts": {"start": "FOO=\"a\u0007b\" BAR=1 node srv.js"}}`)
	te.write("srv/evil/srv.js", "require('http').createServer().listen(process.env['PORT'] ?? '3300');\n")
	got = initDir(t, te, "srv/evil")
	hasLines(t, got,
		`name = "31mevil-app"       # from package.json "name": "\x1b[31mEvil\nApp"`,
		`script = "srv.js"`,
		"port = 3300                # from srv.js: `process.env['PORT'] ?? 3300`",
		"BAR = \"1\"",
	)
	lacks(t, got, "passwd", "FOO =")
	if out := te.stdout.String(); strings.ContainsAny(out, "\x1b\a") || !strings.Contains(out, `note: package.json "main" "../../etc/passwd" is not a path in this directory: not used`) {
		t.Errorf("output:\n%q", out)
	}

	// Not JSON, and too large: not used.
	te.write("srv/bad/package.json", "module.exports = { name: 'x' }\n")
	te.write("srv/bad/app.js", "setInterval(() => {}, 1000);\n")
	initDir(t, te, "srv/bad")
	if !strings.Contains(te.stdout.String(), "note: package.json is not a JSON object: not used") {
		t.Errorf("output:\n%s", te.stdout.String())
	}
	te.write("srv/big/package.json", `{"name": "big", "x": "`+strings.Repeat("x", 1<<20)+`"}`)
	te.write("srv/big/app.js", "setInterval(() => {}, 1000);\n")
	got = initDir(t, te, "srv/big")
	hasLines(t, got, `name = "big"               # from the directory's name`)
	if !strings.Contains(te.stdout.String(), "note: package.json is larger than 1 MiB: not read") {
		t.Errorf("output:\n%s", te.stdout.String())
	}
}

// An app in a home directory closed to other accounts runs as the
// directory's owner, and the file is theirs.
func TestInitClosedHome(t *testing.T) {
	testutil.Root(t) // to give the directory to another user
	te := newTestEnv(t)
	script := te.write("home/alice/app/server.js", "require('http').createServer().listen(process.env.PORT || 3000);\n")
	home, dir := filepath.Join(te.root, "home/alice"), filepath.Dir(script)
	for _, p := range []string{home, dir, script} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(home, 0o750); err != nil {
		t.Fatal(err)
	}
	got := initDir(t, te, "home/alice/app")
	if !strings.Contains(got, "\nuser = \"") || !strings.Contains(got, "# the owner of this directory\n") || !strings.Contains(got, "# The project's own account could not enter ") {
		t.Errorf("no user:\n%s", got)
	}
	st, err := os.Stat(filepath.Join(dir, "bm2.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; uid != 65534 {
		t.Errorf("bm2.toml belongs to uid %d, not to the directory's owner", uid)
	}
}
