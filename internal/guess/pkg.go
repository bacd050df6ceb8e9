package guess

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/bm2dev/bm2/internal/safefs"
)

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
func readPackage(app *Dir) (pkgInfo, string) {
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
