package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/outfile"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/units"
	"golang.org/x/sys/unix"
)

// initFlags are `bm2 init`'s.
type initFlags struct {
	force bool
	name  string
}

const (
	// initMaxRead bounds every file bm2 init reads: package.json and
	// each source file.
	initMaxRead = 1 << 20
	// initMaxFiles bounds the source files read: the entry file and the
	// files it imports (relative imports, two levels down).
	initMaxFiles = 16
	initMaxDepth = 2
	// initGuessPort is the port written when the app listens on one the
	// code does not name.
	initGuessPort = 3000
)

// initCmd is `bm2 init [dir]`: it writes a commented bm2.toml into an
// app's directory, guessed from its package.json and its code, which
// bm2 check and bm2 serve then take.
//
// Everything in the directory is data: package.json is read as JSON (at
// most 1 MiB), the code is read as text and matched with regular
// expressions, nothing is run, and no symbolic link inside the directory
// is followed (run by root in a user's directory, a link could point
// anywhere). The file is parsed as bm2 serve parses it before it is
// written, atomically, so that bm2 init never leaves a file bm2 would
// refuse.
func (a *App) initCmd(ctx context.Context, args []string, f initFlags) error {
	dir := "."
	if len(args) > 0 {
		dir = args[0]
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(control.BadArg, "name the app's directory (default: the current one)", fmt.Errorf("init: no such directory: %s", dir))
	case err != nil:
		return fmt.Errorf("init: %w", err)
	case !st.IsDir():
		return fail(control.BadArg, "name the app's directory: bm2 init writes its bm2.toml, and bm2 start "+dir+" runs a script as it is",
			fmt.Errorf("init: %s is not a directory", dir))
	}
	if f.name != "" && !config.ValidName(f.name) {
		return usageErr("init", "init: --name %q is not a project name: [a-z0-9][a-z0-9_-]*, at most 64 characters", f.name)
	}
	file := filepath.Join(abs, control.ProjectFileName)
	next := nextSteps(dir, len(args) > 0)
	exists := fail(control.Failed, next+"; `bm2 init --force` replaces it with a new guess",
		fmt.Errorf("init: %s exists already", file))
	if _, err := os.Lstat(file); err == nil && !f.force {
		return exists
	}
	app, err := openAppDir(abs)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	defer app.close()
	g, err := guessProject(app, abs, f.name)
	if err != nil {
		return fail(control.Failed, "write bm2.toml by hand (bm2.toml(5) has an example), or run a script as it is: bm2 start app.js", err)
	}
	if owner, closed := a.initUser(abs); owner != "" {
		g.user, g.userWhy = owner, closed
	}
	data := g.render()
	p, err := a.c.ParseDirProject(file, data, abs, false)
	if err != nil {
		return fail(control.Invalid, "nothing was written; write bm2.toml by hand (see bm2.toml(5)), or fix what is named and run bm2 init again",
			fmt.Errorf("init: the bm2.toml guessed for %s would not be valid:\n%w", dir, err))
	}
	res, _, err := outfile.WriteImported(file, data, 0o644, f.force, false, -1)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if res == outfile.Differs {
		return exists // written since it was looked for
	}
	w := a.Out
	fmt.Fprintf(w, "wrote %s: %s\n", file, p.Summary())
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			fmt.Fprintf(w, "  %s\n", termtext.Escape(line))
		}
	}
	for _, n := range g.notes {
		fmt.Fprintf(w, "note: %s\n", termtext.Escape(n))
	}
	fmt.Fprintf(w, "next: %s\n", next)
	return nil
}

// nextSteps is what to type once a directory has its bm2.toml.
func nextSteps(dir string, named bool) string {
	arg := ""
	if named {
		arg = " " + dir
	}
	if os.Geteuid() == 0 {
		return fmt.Sprintf("`bm2 check%s` checks it, `bm2 serve%s` registers the project and starts it", arg, arg)
	}
	return fmt.Sprintf("`bm2 check%s` checks it, `sudo bm2 serve%s` registers the project and starts it (`bm2 serve%s`: under your own systemd)", arg, arg, arg)
}

// initUser is the account to write as user: the directory's owner when
// the project's own account could not enter the directory (a home
// directory closed to other accounts), with the directory that is
// closed; "" when its own account can, or the owner is root.
func (a *App) initUser(dir string) (owner, closed string) {
	for d := dir; ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			closed = d
		}
		if d == "/" || d == "." {
			break
		}
	}
	if closed == "" {
		return "", ""
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil || st.Uid == 0 {
		return "", ""
	}
	if a.c.Accounts != nil {
		if u, err := a.c.Accounts.UserID(int(st.Uid)); err == nil && u.Name != "" {
			return u.Name, closed
		}
	}
	return strconv.Itoa(int(st.Uid)), closed
}

// appDir is the app's directory, read as data.
type appDir struct {
	d *safefs.Dir
}

// openAppDir opens the directory. Root follows only root's links on the
// way to it, as bm2 import does.
func openAppDir(abs string) (*appDir, error) {
	p := safefs.Policy{Follow: safefs.FollowAll}
	if os.Geteuid() == 0 {
		p.Follow = safefs.FollowRootOwned
	}
	d, err := safefs.OpenDir(abs, p)
	if err != nil {
		return nil, err
	}
	return &appDir{d: d}, nil
}

func (a *appDir) close() { a.d.Close() }

// at walks to the directory that holds rel (a slash-separated path below
// the app's directory), following no link, and returns it and rel's last
// component; done closes what it opened.
func (a *appDir) at(rel string) (d *safefs.Dir, base string, done func(), err error) {
	dir, base := path.Split(rel)
	if dir == "" {
		return a.d, base, func() {}, nil
	}
	sub, err := a.d.OpenDir(strings.TrimSuffix(dir, "/"), safefs.Policy{Follow: safefs.FollowNone, NoDotDot: true})
	if err != nil {
		return nil, "", nil, err
	}
	return sub, base, func() { sub.Close() }, nil
}

// read reads the regular file rel, at most initMaxRead bytes (more is an
// error that wraps safefs.ErrTooLarge).
func (a *appDir) read(rel string) ([]byte, error) {
	d, base, done, err := a.at(rel)
	if err != nil {
		return nil, err
	}
	defer done()
	fd, err := safefs.OpenAt(d.Fd(), base, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		if err == unix.ELOOP {
			return nil, &fs.PathError{Op: "read", Path: rel, Err: errors.New("a symbolic link, which bm2 init does not follow")}
		}
		return nil, &fs.PathError{Op: "read", Path: rel, Err: err}
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: rel, Err: errors.New("not a regular file")}
	}
	return safefs.ReadAll(f, initMaxRead)
}

// exists tells whether rel is there and is not a directory (a link
// counts: the runtime follows it).
func (a *appDir) exists(rel string) bool {
	d, base, done, err := a.at(rel)
	if err != nil {
		return false
	}
	defer done()
	var st unix.Stat_t
	return unix.Fstatat(d.Fd(), base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR
}

// relPathRE is a path bm2 init takes from package.json or the code: plain
// names, no spaces, quotes or control characters.
var relPathRE = regexp.MustCompile(`^[A-Za-z0-9_.@+-]+(/[A-Za-z0-9_.@+-]+)*$`)

// cleanRel makes a path from package.json or the code relative to the
// app's directory: "" when it leaves the directory or has unusual
// characters.
func cleanRel(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	if !relPathRE.MatchString(p) || p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}

// quoted is untrusted text for a comment or a terminal: ASCII, escaped,
// in double quotes, at most about 80 characters of it.
func quoted(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "..."
	}
	return strconv.QuoteToASCII(s)
}

// pkgInfo is what bm2 init takes from package.json.
type pkgInfo struct {
	found                 bool
	name, main, module    string
	start                 string // scripts.start
	engineNode, engineBun bool
	bunTypes              bool // @types/bun or bun-types among its dependencies
}

// readPackage reads package.json as JSON, every field optional and any
// of another type ignored; the note says why it was not used.
func readPackage(app *appDir) (pkgInfo, string) {
	var p pkgInfo
	data, err := app.read("package.json")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, ""
	case errors.Is(err, safefs.ErrTooLarge):
		return p, "package.json is larger than 1 MiB: not read"
	case err != nil:
		return p, fmt.Sprintf("package.json not read: %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &raw); err != nil {
		return p, "package.json is not a JSON object: not used"
	}
	p.found = true
	str := func(m map[string]json.RawMessage, k string) string {
		var s string
		if json.Unmarshal(m[k], &s) != nil {
			return ""
		}
		return s
	}
	table := func(k string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw[k], &m) != nil {
			return nil
		}
		return m
	}
	p.name, p.main, p.module = str(raw, "name"), str(raw, "main"), str(raw, "module")
	p.start = str(table("scripts"), "start")
	engines := table("engines")
	_, p.engineNode = engines["node"]
	_, p.engineBun = engines["bun"]
	for _, k := range []string{"dependencies", "devDependencies"} {
		deps := table(k)
		for _, d := range []string{"@types/bun", "bun-types"} {
			if _, ok := deps[d]; ok {
				p.bunTypes = true
			}
		}
	}
	return p, ""
}

// startCmd is what scripts.start runs, when it runs a file with a
// runtime: `node server.js`, `NODE_ENV=production bun run src/index.ts`.
type startCmd struct {
	runner string // node, bun, tsx, ts-node or nodemon
	script string
	env    [][2]string // NAME=VALUE words before the command
	text   string      // the command, as written
}

// startRunners are the commands scripts.start may run a file with.
var startRunners = map[string]bool{"node": true, "bun": true, "tsx": true, "ts-node": true, "nodemon": true}

// valueFlags are runtime options whose value is the next word.
var valueFlags = map[string]bool{"-r": true, "--require": true, "--import": true, "--loader": true, "--experimental-loader": true,
	"--env-file": true, "--preload": true, "--watch-path": true, "--conditions": true, "-C": true, "--title": true, "--tsconfig": true}

var envWordRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// parseStart finds the command of scripts.start that runs a file: the
// first one of `a && b; c` that is one of startRunners.
func parseStart(s string) (startCmd, bool) {
	seps := strings.NewReplacer("&&", "\n", "||", "\n", ";", "\n", "|", "\n", "&", "\n")
outer:
	for _, seg := range strings.Split(seps.Replace(s), "\n") {
		words := strings.Fields(seg)
		var env [][2]string
		i := 0
		for ; i < len(words); i++ {
			if words[i] == "cross-env" || words[i] == "env" || words[i] == "exec" {
				continue
			}
			if m := envWordRE.FindStringSubmatch(words[i]); m != nil {
				env = append(env, [2]string{m[1], strings.Trim(m[2], `"'`)})
				continue
			}
			break
		}
		if i == len(words) || !startRunners[path.Base(words[i])] {
			continue
		}
		c := startCmd{runner: path.Base(words[i]), env: env, text: strings.Join(words, " ")}
		rest := words[i+1:]
		if len(rest) > 0 && (c.runner == "bun" && rest[0] == "run" || c.runner == "tsx" && rest[0] == "watch") {
			rest = rest[1:]
		}
		for j := 0; j < len(rest); j++ {
			w := rest[j]
			switch {
			case w == "-e" || w == "--eval" || w == "-p" || w == "--print":
				continue outer // code on the command line, no file
			case valueFlags[w]:
				j++
			case strings.HasPrefix(w, "-"):
			default:
				if c.script = cleanRel(strings.Trim(w, `"'`)); c.script == "" {
					continue outer
				}
				return c, true
			}
		}
	}
	return startCmd{}, false
}

// initCandidates are the entry files looked for when package.json names
// none, in this order.
var initCandidates = []string{
	"index.js", "server.js", "app.js", "index.ts", "server.ts", "app.ts",
	"index.mjs", "server.mjs", "app.mjs", "main.js", "main.ts",
	"src/index.ts", "src/index.js", "src/server.ts", "src/server.js", "src/app.ts", "src/app.js", "src/main.ts", "src/main.js",
}

// code is what bm2 init found in the app's code about its port: each
// fact with the file it was found in and the words found.
type code struct {
	files []string // read, the entry first

	port                        int // a default in the code: process.env.PORT || 3000
	portVar, portFile, portText string

	readsVar, readsFile string // a port variable read, without a default

	literal                  int // the app's own port: .listen(3000), Bun.serve({ port: 3000 })
	literalFile, literalText string

	listens, listenFile    string // the first sign of listening found, and where
	bunServe               bool   // Bun.serve, export default { fetch }, Elysia
	nodeHTTP, nodeHTTPFile string // a server on node:http (express, fastify, ...)
	reusePort, reuseFile   string // reusePort: true, where
}

var (
	portDefaultRE = regexp.MustCompile(`((?:process\.env|Bun\.env|import\.meta\.env)(?:\.(PORT|NODE_PORT|BM2_APP_PORT)\b|\[\s*['"](PORT|NODE_PORT|BM2_APP_PORT)['"]\s*\]))\s*\)?\s*(\|\||\?\?)\s*['"]?([0-9]{1,5})\b`)
	portReadRE    = regexp.MustCompile(`(?:process\.env|Bun\.env|import\.meta\.env)(?:\.(PORT|NODE_PORT|BM2_APP_PORT)\b|\[\s*['"](PORT|NODE_PORT|BM2_APP_PORT)['"]\s*\])`)
	listenRE      = regexp.MustCompile(`\.listen\s*\(`)
	listenPortRE  = regexp.MustCompile(`\.listen\s*\(\s*(?:['"]?([0-9]{2,5})\b|\{[^{}()]{0,200}?\bport\s*:\s*([0-9]{2,5})\b)`)
	bunServeRE    = regexp.MustCompile(`\bBun\.serve\s*\(`)
	servePortRE   = regexp.MustCompile(`^\s*\{[^{}]{0,300}?\bport\s*:\s*([0-9]{2,5})\b`)
	exportFetchRE = regexp.MustCompile(`export\s+default\s*\{`)
	fetchRE       = regexp.MustCompile(`\bfetch\s*[(:,]`)
	exportAppRE   = regexp.MustCompile(`(?m)^export\s+default\s+[A-Za-z_$][A-Za-z0-9_$]*\s*;?\s*$`)
	fromModRE     = regexp.MustCompile(`(?:\brequire\s*\(\s*|\bfrom\s+|\bimport\s+)['"]((?:node:)?[a-z0-9@/._-]+)['"]`)
	reusePortRE   = regexp.MustCompile(`\breusePort\s*:\s*true\b`)
	importRE      = regexp.MustCompile(`(?:\brequire\s*\(\s*|\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}/[^'"\n]{1,200})['"]`)
)

// nodeHTTPModules are the modules whose servers listen through node:http,
// whose reusePort Bun ignores.
var nodeHTTPModules = map[string]bool{"http": true, "https": true, "http2": true, "node:http": true, "node:https": true, "node:http2": true,
	"express": true, "fastify": true, "koa": true, "@hapi/hapi": true, "restify": true, "@nestjs/core": true,
	"@nestjs/platform-express": true, "@hono/node-server": true, "polka": true, "connect": true}

// words is a match as one line for a comment: its whitespace made single
// spaces, anything but printable ASCII made "?".
func words(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

// scanCode reads the entry file and the files it imports (relative
// imports, initMaxDepth levels down, at most initMaxFiles files) and
// notes what they say of the port.
func scanCode(app *appDir, entry string) code {
	var c code
	type item struct {
		rel   string
		depth int
	}
	queue := []item{{entry, 0}}
	seen := map[string]bool{entry: true}
	for len(queue) > 0 && len(c.files) < initMaxFiles {
		it := queue[0]
		queue = queue[1:]
		data, err := app.read(it.rel)
		if err != nil && !errors.Is(err, safefs.ErrTooLarge) {
			continue
		}
		c.files = append(c.files, it.rel)
		c.scan(it.rel, data)
		if it.depth >= initMaxDepth {
			continue
		}
		for _, m := range importRE.FindAllSubmatch(data, -1) {
			if rel := resolveImport(app, path.Dir(it.rel), string(m[1])); rel != "" && !seen[rel] {
				seen[rel] = true
				queue = append(queue, item{rel, it.depth + 1})
			}
		}
	}
	return c
}

// scan notes what one file says; the first file to say a thing wins.
func (c *code) scan(file string, data []byte) {
	if c.port == 0 {
		if m := portDefaultRE.FindSubmatch(data); m != nil {
			if n, err := strconv.Atoi(string(m[5])); err == nil && n >= 1 && n <= 65535 {
				c.port, c.portVar, c.portFile = n, string(m[2])+string(m[3]), file
				c.portText = words(m[1]) + " " + string(m[4]) + " " + string(m[5])
			}
		}
	}
	if c.readsVar == "" {
		if m := portReadRE.FindSubmatch(data); m != nil {
			c.readsVar, c.readsFile = string(m[1])+string(m[2]), file
		}
	}
	if c.literal == 0 {
		if m := listenPortRE.FindSubmatch(data); m != nil {
			if n, err := strconv.Atoi(string(m[1]) + string(m[2])); err == nil && n >= 1 && n <= 65535 {
				c.literal, c.literalFile, c.literalText = n, file, ".listen("+string(m[1])
				if len(m[2]) > 0 {
					c.literalText = ".listen({ port: " + string(m[2])
				}
			}
		}
	}
	bunServe := ""
	if loc := bunServeRE.FindIndex(data); loc != nil {
		bunServe = "Bun.serve()"
		if c.literal == 0 {
			if m := servePortRE.FindSubmatch(data[loc[1]:]); m != nil {
				if n, err := strconv.Atoi(string(m[1])); err == nil && n >= 1 && n <= 65535 {
					c.literal, c.literalFile, c.literalText = n, file, "Bun.serve({ port: "+string(m[1])
				}
			}
		}
	}
	if bunServe == "" {
		for _, loc := range exportFetchRE.FindAllIndex(data, -1) {
			if end := min(loc[1]+2000, len(data)); fetchRE.Match(data[loc[1]:end]) {
				bunServe = "export default { fetch }"
				if c.literal == 0 {
					if m := servePortRE.FindSubmatch(data[loc[1]-1:]); m != nil {
						if n, err := strconv.Atoi(string(m[1])); err == nil && n >= 1 && n <= 65535 {
							c.literal, c.literalFile, c.literalText = n, file, "export default { port: "+string(m[1])
						}
					}
				}
				break
			}
		}
	}
	for _, m := range fromModRE.FindAllSubmatch(data, -1) {
		mod := string(m[1])
		switch {
		case mod == "elysia" || (mod == "hono" && exportAppRE.Match(data)):
			// Elysia listens through Bun.serve; a Hono app exported as
			// the default one is served by Bun.serve.
			if bunServe == "" {
				bunServe = mod + " (Bun.serve)"
			}
		case nodeHTTPModules[mod] && c.nodeHTTP == "":
			c.nodeHTTP, c.nodeHTTPFile = mod, file
		}
	}
	if bunServe != "" {
		c.bunServe = true
		if c.listens == "" {
			c.listens, c.listenFile = bunServe, file
		}
	}
	if c.listens == "" && listenRE.Match(data) {
		c.listens, c.listenFile = ".listen()", file
	}
	if c.reusePort == "" {
		if m := reusePortRE.Find(data); m != nil {
			c.reusePort, c.reuseFile = words(m), file
		}
	}
}

// resolveImport finds the file a relative import names, as Node.js and
// Bun would: as written, with an extension, as a directory's index, or
// (TypeScript) a .js import of a .ts file. "" when none is found.
func resolveImport(app *appDir, from, spec string) string {
	base := cleanRel(path.Join(from, spec))
	if base == "" {
		return ""
	}
	var tries []string
	if isScript(base) && app.exists(base) {
		return base
	}
	for _, ext := range []string{".ts", ".tsx", ".js", ".mjs", ".cjs", ".mts", ".cts", ".jsx"} {
		tries = append(tries, base+ext)
	}
	if ext := path.Ext(base); ext == ".js" || ext == ".mjs" || ext == ".cjs" {
		tries = append(tries, strings.TrimSuffix(base, ext)+".ts", strings.TrimSuffix(base, ext)+".mts", strings.TrimSuffix(base, ext)+".cts")
	}
	for _, ext := range []string{".ts", ".js", ".mjs"} {
		tries = append(tries, base+"/index"+ext)
	}
	for _, t := range tries {
		if app.exists(t) {
			return t
		}
	}
	return ""
}

// initGuess is the bm2.toml bm2 init writes: each key with where it came
// from.
type initGuess struct {
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
	user, userWhy       string // userWhy: the directory its own account cannot enter
	env                 [][2]string
	envWhy              string
	notes               []string
}

// guessProject makes the guess for the app in app (at abs): its name,
// script, runtime, port (and who supplies reusePort) and [env], each from
// what the one before found.
func guessProject(app *appDir, abs, name string) (*initGuess, error) {
	g := &initGuess{}
	pkg, note := readPackage(app)
	if note != "" {
		g.notes = append(g.notes, note)
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
func (g *initGuess) guessName(pkg pkgInfo, abs, name string) {
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
func (g *initGuess) guessScript(app *appDir, pkg pkgInfo, start startCmd, hasStart bool, abs string) error {
	type cand struct{ rel, why string }
	var declared []cand
	for _, f := range []struct{ key, val string }{{"main", pkg.main}, {"module", pkg.module}} {
		if f.val == "" {
			continue
		}
		rel := cleanRel(f.val)
		if rel == "" {
			g.notes = append(g.notes, fmt.Sprintf("package.json %q %s is not a path in this directory: not used", f.key, quoted(f.val)))
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
		g.notes = append(g.notes, fmt.Sprintf("%s, the script, does not exist yet: build the app before bm2 serve", c.rel))
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
func (g *initGuess) guessRuntime(app *appDir, pkg pkgInfo, own *startCmd) {
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
func (g *initGuess) guessPort(app *appDir, own *startCmd) code {
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
		g.port, g.portWhy = initGuessPort, fmt.Sprintf("Bun.serve's default (%s: %s names no port), from PORT", c.listenFile, c.listens)
		g.portEnv, g.portEnvWhy = "PORT", "Bun.serve takes its port from PORT: bm2 sets it"
	default:
		where := c.listenFile
		if where == "" {
			where = c.readsFile
		}
		g.port, g.portWhy = initGuessPort, fmt.Sprintf("a guess: %s listens on a port the code does not name", where)
		switch c.readsVar {
		case "BM2_APP_PORT": // bm2's own: set whatever port_env says
		case "":
			g.portEnv, g.portEnvWhy = "PORT", "the app gets its port in PORT too: bm2 sets it"
		default:
			g.portEnv, g.portEnvWhy = c.readsVar, fmt.Sprintf("%s reads its port from %s: bm2 sets it", c.readsFile, c.readsVar)
		}
		g.notes = append(g.notes, fmt.Sprintf("port %d is a guess (%s listens, on a port the code does not name): set the app's port in bm2.toml", initGuessPort, where))
	}
	return c
}

// guessReusePort is who gives a served app's listen reusePort: the code,
// bm2's preload, or nobody (fork mode: node:http under Bun ignores it).
func (g *initGuess) guessReusePort(c code) {
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
func (g *initGuess) guessEnv(own *startCmd) {
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

// render writes the guess as a bm2.toml: each key with a comment that
// says where it came from, and the keys left at their defaults commented
// out, so that the file teaches them.
func (g *initGuess) render() []byte {
	var b strings.Builder
	line := func(off bool, key, value, why string) {
		s := key + " = " + value
		if off {
			s = "# " + s
		}
		if why != "" {
			s = fmt.Sprintf("%-26s # %s", s, why)
		}
		b.WriteString(s + "\n")
	}
	comment := func(lines ...string) {
		for _, l := range lines {
			b.WriteString("# " + l + "\n")
		}
	}
	comment("The bm2 project file of "+g.name+", written by `bm2 init` from what it found",
		"in this directory: each key says where it came from, and the keys commented",
		"out show their defaults. Every key is in bm2.toml(5). `bm2 check` checks",
		"this file; `sudo bm2 serve` fills in cwd (this directory) and runtime_path,",
		"registers the project and starts it.")
	b.WriteString("\n")
	line(false, "name", config.TOMLString(g.name), g.nameWhy)
	comment(g.scriptAbove...)
	line(false, "script", config.TOMLString(g.script), g.scriptWhy)
	line(false, "runtime", config.TOMLString(g.runtime), g.runtimeWhy)
	if len(g.runtimeArgs) > 0 {
		line(false, "runtime_args", tomlStrings(g.runtimeArgs), g.runtimeArgsWhy)
	}
	if g.runtimeArgsOff != "" {
		comment(g.runtimeArgsOff)
	}
	b.WriteString("\n")
	if g.worker {
		comment(g.workerWhy...)
		line(true, "port", strconv.Itoa(initGuessPort), "")
		line(true, "port_env", `["PORT"]`, "")
	} else {
		line(false, "port", strconv.Itoa(g.port), g.portWhy)
		if g.portEnv != "" {
			line(false, "port_env", tomlStrings([]string{g.portEnv}), g.portEnvWhy)
		}
		switch {
		case g.fork:
			comment(g.forkWhy...)
			line(false, "exec_mode", `"fork"`, "instance i on port+i")
		case g.preload:
			line(false, "reuseport", `"preload"`, g.reuseWhy)
		default:
			line(true, "reuseport", `"app"`, g.reuseWhy)
		}
	}
	b.WriteString("\n")
	line(true, "instances", "1", "how many; \"max\" is one per CPU")
	if !g.worker && !g.fork {
		line(true, "exec_mode", `"cluster"`, "the default: all on port (SO_REUSEPORT); \"fork\": instance i on port+i")
	}
	if g.user != "" {
		comment(fmt.Sprintf("The project's own account could not enter %s: it runs as", g.userWhy),
			"the directory's owner. Leave user out for an account of its own, "+units.Account(g.name)+".")
		line(false, "user", config.TOMLString(g.user), "the owner of this directory")
	} else {
		line(true, "user", `"www-data"`, "default: an account of its own, "+units.Account(g.name))
	}
	b.WriteString("\n")
	if len(g.env) > 0 {
		b.WriteString("[env]                      # " + g.envWhy + "\n")
		for _, kv := range g.env {
			b.WriteString(tomlEnvKey(kv[0]) + " = " + config.TOMLString(kv[1]) + "\n")
		}
	} else {
		b.WriteString("# [env]\n# NODE_ENV = \"production\"\n")
	}
	return []byte(b.String())
}

func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = config.TOMLString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// tomlEnvKey is an [env] name as a TOML key: bare when it may be (every
// environment name config takes may).
func tomlEnvKey(k string) string {
	if envWordRE.MatchString(k + "=") {
		return k
	}
	return config.TOMLString(k)
}
