package guess

import (
	"errors"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/safefs"
)

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
// imports, maxDepth levels down, at most maxFiles files) and
// notes what they say of the port.
func scanCode(app *Dir, entry string) code {
	var c code
	type item struct {
		rel   string
		depth int
	}
	queue := []item{{entry, 0}}
	seen := map[string]bool{entry: true}
	for len(queue) > 0 && len(c.files) < maxFiles {
		it := queue[0]
		queue = queue[1:]
		data, err := app.read(it.rel)
		if err != nil && !errors.Is(err, safefs.ErrTooLarge) {
			continue
		}
		c.files = append(c.files, it.rel)
		c.scan(it.rel, data)
		if it.depth >= maxDepth {
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
func resolveImport(app *Dir, from, spec string) string {
	base := cleanRel(path.Join(from, spec))
	if base == "" {
		return ""
	}
	var tries []string
	if IsScript(base) && app.exists(base) {
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
