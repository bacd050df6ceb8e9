package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/guess"
	"github.com/bm2dev/bm2/internal/pm2/convert"
	"github.com/bm2dev/bm2/internal/pm2/importer"
	"github.com/bm2dev/bm2/internal/trust"
)

// startFlags are `bm2 start`'s: a project's name needs none of them; a
// script takes PM2's (-i, --name, --port, --env K=V, -- args); an
// ecosystem file takes --only and --env NAME.
type startFlags struct {
	instances string
	name      string
	port      int
	env       []string
	only      []string
	force     bool
	args      []string // after --
	timeout   time.Duration
	control.ServeFlags
}

// startCmd is `bm2 start`: PM2's first command. A project's name (or an
// instance's) starts it, as always; a script (app.js) is written into a
// bm2.toml beside it, as bm2 import would write it from PM2's `pm2 start
// app.js`, and served; an ecosystem file or a dump is `bm2 import
// --serve`.
func (a *App) startCmd(ctx context.Context, args []string, f startFlags) error {
	target := args[0]
	scriptFlags := f.instances != "" || f.name != "" || f.port != 0 || len(f.env) > 0 || f.force || len(f.args) > 0
	if !strings.ContainsAny(target, "./") {
		// A project's name: names have no dot and no slash.
		if scriptFlags || len(f.only) > 0 || len(args) > 1 {
			return usageErr("start", "start: %s is a project's name, which takes no -i, --name, --port, --env, --only or arguments: "+
				"bm2 start app.js -i 4 starts a script; to change a project, edit its bm2.toml and run bm2 serve", target)
		}
		return a.c.Control(ctx, "start", target, f.timeout)
	}
	if len(args) > 1 {
		return usageErr("start", "start: too many arguments (%s): the app's own arguments go after --, as in bm2 start app.js -- --verbose", strings.Join(args[1:], " "))
	}
	st, err := os.Stat(target)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail(control.BadArg, "name a script (bm2 start app.js), an ecosystem file (bm2 start ecosystem.config.js) or a project (bm2 list shows them)",
				fmt.Errorf("start: no such file: %s", target))
		}
		return err
	}
	if st.IsDir() {
		return fail(control.BadArg, "bm2 serve "+target+" serves the bm2.toml in a directory", fmt.Errorf("start: %s is a directory", target))
	}
	if importer.IsEcosystemFile(target) {
		if scriptFlags {
			return usageErr("start", "start: %s is an ecosystem file: its apps say their instances, names, ports and arguments (only --only and --env NAME apply)", target)
		}
		envName := ""
		if len(f.env) == 1 && !strings.Contains(f.env[0], "=") {
			envName = f.env[0]
		} else if len(f.env) > 0 {
			return usageErr("start", "start: with an ecosystem file, --env names the env_NAME block to use (--env production)")
		}
		fmt.Fprintf(a.Out, "bm2 start %s: bm2 import --serve, which writes a bm2.toml beside each app and serves it\n", target)
		return a.importCmd(ctx, []string{target}, importFlags{env: envName, only: f.only, serve: true, ServeFlags: f.ServeFlags})
	}
	if !guess.IsScript(target) {
		return fail(control.BadArg, "bm2 start runs a script ("+strings.Join(guess.ScriptExts, " ")+"), an ecosystem file (ecosystem.config.js, .json, .yaml, dump.pm2) or a project by name",
			fmt.Errorf("start: %s is neither a script nor an ecosystem file", target))
	}
	if len(f.only) > 0 {
		return usageErr("start", "start: --only chooses apps of an ecosystem file; %s is a script", target)
	}
	return a.startScript(ctx, target, f)
}

// startScript is `bm2 start app.js [-i N|max] [--name] [--port] [--env
// K=V] [-- args]`: the app PM2 would have started, as an ecosystem app
// of one, through bm2 import's mapping (package convert): -i is cluster
// mode with bm2's reusePort preload, the port reaches the app in PORT;
// no port anywhere makes a worker. The bm2.toml is written beside the
// script (replaced only with --force), then served.
func (a *App) startScript(ctx context.Context, script string, f startFlags) error {
	abs, err := filepath.Abs(script)
	if err != nil {
		return err
	}
	dir := filepath.Dir(abs)
	name := f.name
	if name == "" {
		name = guess.ScriptName(abs)
	}
	if !config.ValidName(name) {
		return usageErr("start", "start: --name %q is not a project name: [a-z0-9][a-z0-9_-]*, at most 64 characters", name)
	}
	if f.instances != "" && f.instances != "max" {
		if n, err := strconv.Atoi(f.instances); err != nil || n < 1 {
			return usageErr("start", "start: -i %q: give a number of instances (-i 4) or max (one per CPU)", f.instances)
		}
	}
	inEnv := false // PORT in --env
	for _, kv := range f.env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageErr("start", "start: --env %q: give NAME=VALUE (--env NODE_ENV=production)", kv)
		}
		inEnv = inEnv || k == "PORT"
	}
	app := importer.ScriptApp(abs, name, f.instances, f.env, f.args)
	port := f.port
	if port == 0 && !inEnv {
		if p, how := guess.ScriptPort(abs); p != 0 {
			port = p
			fmt.Fprintf(a.Out, "port %d: %s reads `%s`; bm2 gives it that port in PORT (--port N chooses another)\n", p, filepath.Base(abs), how)
		}
	}
	uid := os.Geteuid()
	src := convert.Source{File: abs, Apps: []*convert.Object{app}, Owner: uid, OwnerKnown: true, Speaker: uid}
	speaker := -1
	if uid == 0 {
		speaker = 0
	}
	opts := convert.Options{Port: port, NumCPU: a.c.NumCPU, Owner: a.dirOwner,
		Runtime: func(kind config.Runtime, rp string) string { return a.importRuntime(ctx, kind, rp, speaker) }}
	res := convert.Map(src, opts)
	for _, n := range res.Notes {
		fmt.Fprintf(a.Out, "note: %s\n", n)
	}
	if len(res.Refused) > 0 {
		return fail(control.Invalid, "", fmt.Errorf("start %s: %s", script, res.Refused[0]))
	}
	if len(res.Projects) != 1 {
		return fmt.Errorf("start %s: no project made", script)
	}
	p := res.Projects[0]
	fmt.Fprintf(a.Out, "bm2 start %s: writes %s (as bm2 import would from pm2 start), then serves it; edit it and run `bm2 serve %s` to change the project\n",
		script, p.File, dir)
	origin := trust.Origin{File: abs, UID: uid}
	imp := importFlags{force: f.force, ServeFlags: f.ServeFlags}
	if problem := a.importOne(ctx, p, origin, imp, -1); problem != "" {
		return fail(control.Invalid, "fix it and run bm2 start again (--force replaces a bm2.toml that differs)", errors.New(problem))
	}
	return a.serveImported(ctx, p, origin, imp)
}
