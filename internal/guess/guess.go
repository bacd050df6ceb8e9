package guess

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/bm2dev/bm2/internal/config"
)

// Guess is the bm2.toml bm2 init writes: each key with where it came
// from.
type Guess struct {
	name, nameWhy       string
	script, scriptWhy   string
	scriptAbove         []string // comment lines before script
	runtime, runtimeWhy string
	runtimeArgs         []string
	runtimeArgsWhy      string
	runtimeArgsOff      string // a runtime_args line to suggest, commented out
	worker              bool
	workerWhy           []string
	port                int
	portWhy             string
	portEnv             string
	portEnvWhy          string
	fork                bool
	forkWhy             []string
	preload             bool
	reuseWhy            string
	User, UserWhy       string // userWhy: the directory its own account cannot enter
	env                 [][2]string
	envWhy              string
	Notes               []string
}

// Make makes the guess for the app in app (at abs): its name,
// script, runtime, port (and who supplies reusePort) and [env], each from
// what the one before found.
func Make(app *Dir, abs, name string) (*Guess, error) {
	g := &Guess{}
	pkg, note := readPackage(app)
	if note != "" {
		g.Notes = append(g.Notes, note)
	}
	start, hasStart := parseStart(pkg.start)
	g.guessName(pkg, abs, name)
	if err := g.guessScript(app, pkg, start, hasStart, abs); err != nil {
		return nil, err
	}
	// scripts.start, when it runs the script found: its runner, its env.
	var own *startCmd
	if hasStart && start.script == g.script {
		own = &start
	}
	g.guessRuntime(app, pkg, own)
	c := g.guessPort(app, own)
	if !g.worker {
		g.guessReusePort(c)
	}
	g.guessEnv(own)
	return g, nil
}

// guessName is the project's name: --name, else package.json's, else the
// directory's.
func (g *Guess) guessName(pkg pkgInfo, abs, name string) {
	switch {
	case name != "":
		g.name, g.nameWhy = name, "from --name"
	case pkg.name != "" && initName(pkg.name) != "":
		g.name, g.nameWhy = initName(pkg.name), "from package.json \"name\": "+quoted(pkg.name)
	default:
		g.name = initName(filepath.Base(abs))
		g.nameWhy = "from the directory's name"
		if g.name == "" {
			g.name, g.nameWhy = "app", "the directory's name is no project name"
		}
		if pkg.found {
			g.nameWhy += " (package.json has no \"name\")"
		}
	}
}

// guessScript is the entry file: the one package.json names (main,
// module, scripts.start), else the first usual name found here, else the
// one named but not built yet.
func (g *Guess) guessScript(app *Dir, pkg pkgInfo, start startCmd, hasStart bool, abs string) error {
	type cand struct{ rel, why string }
	var declared []cand
	for _, f := range []struct{ key, val string }{{"main", pkg.main}, {"module", pkg.module}} {
		if f.val == "" {
			continue
		}
		rel := cleanRel(f.val)
		if rel == "" {
			g.Notes = append(g.Notes, fmt.Sprintf("package.json %q %s is not a path in this directory: not used", f.key, quoted(f.val)))
			continue
		}
		why := fmt.Sprintf("from package.json %q", f.key)
		declared = append(declared, cand{rel, why})
		if path.Ext(rel) == "" {
			declared = append(declared, cand{rel + ".js", why}, cand{rel + "/index.js", why})
		}
	}
	if hasStart {
		declared = append(declared, cand{start.script, "from package.json scripts.start: " + quoted(start.text)})
	}
	for _, c := range declared {
		if app.exists(c.rel) {
			g.script, g.scriptWhy = c.rel, c.why
			break
		}
	}
	if g.script == "" {
		for _, rel := range initCandidates {
			if app.exists(rel) {
				g.script, g.scriptWhy = rel, "the first of index.js, server.js, app.js, ... found here"
				if len(declared) > 0 {
					g.scriptAbove = append(g.scriptAbove, fmt.Sprintf("%s names %s, which does not exist (yet: a build makes it?).", strings.TrimPrefix(declared[0].why, "from "), declared[0].rel))
				}
				break
			}
		}
	}
	if g.script == "" && len(declared) > 0 {
		// Named but not there (yet): a build makes it, say.
		c := declared[0]
		g.script, g.scriptWhy = c.rel, c.why
		g.scriptAbove = append(g.scriptAbove, fmt.Sprintf("%s does not exist yet: build the app before bm2 serve.", c.rel))
		g.Notes = append(g.Notes, fmt.Sprintf("%s, the script, does not exist yet: build the app before bm2 serve", c.rel))
	}
	if g.script == "" {
		return fmt.Errorf("init: no script found in %s: package.json names none (main, module, or a scripts.start such as node server.js), and there is no index.js, server.js or app.js", abs)
	}
	if hasStart && start.script != g.script && app.exists(start.script) {
		g.scriptAbove = append(g.scriptAbove, fmt.Sprintf("package.json scripts.start runs %s: write that here if it is the server.", start.script))
	}
	return nil
}

// guessRuntime is node or bun: from what scripts.start runs it with (own:
// nil unless it runs the script), package.json's engines, the lock file,
// Bun's types, else the script's extension.
func (g *Guess) guessRuntime(app *Dir, pkg pkgInfo, own *startCmd) {
	bunLock := app.exists("bun.lockb") || app.exists("bun.lock")
	otherLock := app.exists("package-lock.json") || app.exists("yarn.lock") || app.exists("pnpm-lock.yaml")
	runner := ""
	if own != nil {
		runner = own.runner
	}
	switch {
	case runner == "bun":
		g.runtime, g.runtimeWhy = "bun", "from scripts.start, which runs bun"
	case runner == "tsx":
		g.runtime, g.runtimeWhy = "node", "from scripts.start, which runs tsx (Node.js)"
		g.runtimeArgs, g.runtimeArgsWhy = []string{"--import", "tsx"}, "as scripts.start runs it: tsx must be installed"
	case runner != "":
		g.runtime, g.runtimeWhy = "node", fmt.Sprintf("from scripts.start, which runs %s", runner)
		if runner == "ts-node" {
			g.runtimeArgsOff = `runtime_args = ["--require", "ts-node/register"]  # if Node.js's own type stripping is not enough`
		}
	case pkg.engineBun && !pkg.engineNode:
		g.runtime, g.runtimeWhy = "bun", "from package.json engines.bun"
	case pkg.engineNode && !pkg.engineBun && !bunLock:
		g.runtime, g.runtimeWhy = "node", "from package.json engines.node"
	case bunLock && !otherLock:
		g.runtime, g.runtimeWhy = "bun", "from the bun.lock file here"
	case pkg.bunTypes:
		g.runtime, g.runtimeWhy = "bun", "from package.json's dependency on Bun's types"
	default:
		g.runtime = string(config.RuntimeFor(g.script))
		if g.runtime == string(config.Bun) {
			g.runtimeWhy = "from the " + path.Ext(g.script) + " extension: Bun runs TypeScript as it is"
		} else {
			g.runtimeWhy = "the default for a " + strings.TrimPrefix(path.Ext(g.script)+" ", " ") + "script"
		}
	}
}

// guessPort is the port and the variable it is given in, from
// scripts.start's PORT= (own: nil unless it runs the script) or what the
// code reads and listens on; no sign of listening makes a worker. It
// returns what the code scan found, which says who supplies reusePort.
func (g *Guess) guessPort(app *Dir, own *startCmd) code {
	c := scanCode(app, g.script)
	bun := g.runtime == "bun"
	startPort := 0
	if own != nil {
		for _, kv := range own.env {
			if kv[0] == "PORT" {
				if n, err := strconv.Atoi(kv[1]); err == nil && n >= 1 && n <= 65535 {
					startPort = n
				}
			}
		}
	}
	listens := c.listens != "" || c.port != 0 || c.readsVar != "" || c.literal != 0 || startPort != 0
	switch {
	case !listens:
		g.worker = true
		read := g.script
		switch n := len(c.files) - 1; {
		case n == 1:
			read = g.script + " and the file it imports"
		case n > 1:
			read = fmt.Sprintf("%s and the %d files it imports", g.script, n)
		}
		g.workerWhy = []string{
			fmt.Sprintf("A worker: no port. Nothing in %s listens", read),
			"(no .listen(), no Bun.serve(), no PORT read), so bm2 gives it no port and",
			"lets it bind none. If it does serve, set its port (and port_env for an app",
			"that reads it from PORT):",
		}
		if len(c.files) == 0 {
			g.workerWhy = []string{
				fmt.Sprintf("A worker, for now: bm2 init could not read %s, so it found no port.", g.script),
				"If the app serves, set its port (and port_env for an app that reads it",
				"from PORT):",
			}
		}
	case startPort != 0:
		g.port, g.portWhy = startPort, "from package.json scripts.start: PORT="+strconv.Itoa(startPort)
		g.portEnv, g.portEnvWhy = "PORT", "the app reads its port from PORT: bm2 sets it"
	case c.port != 0:
		g.port, g.portWhy = c.port, fmt.Sprintf("from %s: `%s`", c.portFile, c.portText)
		if c.portVar != "BM2_APP_PORT" {
			g.portEnv, g.portEnvWhy = c.portVar, "the app reads its port from "+c.portVar+": bm2 sets it"
		}
	case c.literal != 0:
		g.port, g.portWhy = c.literal, fmt.Sprintf("from %s: `%s`, fixed in the code", c.literalFile, c.literalText)
	case c.bunServe && bun && c.nodeHTTP == "" && c.readsVar == "":
		g.port, g.portWhy = defaultPort, fmt.Sprintf("Bun.serve's default (%s: %s names no port), from PORT", c.listenFile, c.listens)
		g.portEnv, g.portEnvWhy = "PORT", "Bun.serve takes its port from PORT: bm2 sets it"
	default:
		where := c.listenFile
		if where == "" {
			where = c.readsFile
		}
		g.port, g.portWhy = defaultPort, fmt.Sprintf("a guess: %s listens on a port the code does not name", where)
		switch c.readsVar {
		case "BM2_APP_PORT": // bm2's own: set whatever port_env says
		case "":
			g.portEnv, g.portEnvWhy = "PORT", "the app gets its port in PORT too: bm2 sets it"
		default:
			g.portEnv, g.portEnvWhy = c.readsVar, fmt.Sprintf("%s reads its port from %s: bm2 sets it", c.readsFile, c.readsVar)
		}
		g.Notes = append(g.Notes, fmt.Sprintf("port %d is a guess (%s listens, on a port the code does not name): set the app's port in bm2.toml", defaultPort, where))
	}
	return c
}

// guessReusePort is who gives a served app's listen reusePort: the code,
// bm2's preload, or nobody (fork mode: node:http under Bun ignores it).
func (g *Guess) guessReusePort(c code) {
	bun := g.runtime == "bun"
	switch {
	case bun && c.nodeHTTP != "" && !c.bunServe:
		g.fork = true
		via := c.nodeHTTP
		if c.nodeHTTPFile != c.listenFile {
			via += " (in " + c.nodeHTTPFile + ")"
		}
		g.forkWhy = []string{
			fmt.Sprintf("Fork mode: %s serves through %s, and under Bun", c.listenFile, via),
			"node:http ignores reusePort: the instances could not share one port.",
			"Instance i listens on port+i (put a gateway in front: bm2 gateway nginx);",
			"or set runtime = \"node\" and leave exec_mode out for cluster mode.",
		}
	case c.reusePort != "":
		g.reuseWhy = fmt.Sprintf("the default: %s listens with `%s` itself", c.reuseFile, c.reusePort)
	default:
		g.preload = true
		g.reuseWhy = "bm2 adds reusePort: true to its listen: no code change"
		if c.listens != "" {
			g.reuseWhy = fmt.Sprintf("%s: %s without reusePort; bm2 adds it, no code change", c.listenFile, c.listens)
		}
	}
}

// guessEnv is [env] from scripts.start's assignments (own: nil unless it
// runs the script), but for the port and bm2's own variables.
func (g *Guess) guessEnv(own *startCmd) {
	if own != nil {
		for _, kv := range own.env {
			if kv[0] == "PORT" || kv[0] == g.portEnv || strings.HasPrefix(kv[0], "BM2_") || kv[0] == "NODE_APP_INSTANCE" ||
				strings.ContainsFunc(kv[1], unicode.IsControl) {
				continue
			}
			g.env = append(g.env, kv)
		}
		if len(g.env) > 0 {
			g.envWhy = "from package.json scripts.start"
		}
	}
}

// initName is a project name made of s (a package's name, a directory's):
// a scope (@acme/) left out, lower case, other characters as "-", at most
// 64 characters; "" when nothing is left.
func initName(s string) string {
	s = strings.ToLower(s)
	if strings.HasPrefix(s, "@") {
		if _, after, ok := strings.Cut(s, "/"); ok {
			s = after
		}
	}
	s = strings.Trim(nameRE.ReplaceAllString(s, "-"), "-_")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-_")
	}
	if !config.ValidName(s) {
		return ""
	}
	return s
}
