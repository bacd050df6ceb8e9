package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/guess"
	"github.com/bm2dev/bm2/internal/outfile"
	"github.com/bm2dev/bm2/internal/termtext"
)

// initFlags are `bm2 init`'s.
type initFlags struct {
	force bool
	name  string
}

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
	app, err := guess.OpenDir(abs)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	defer app.Close()
	g, err := guess.Make(app, abs, f.name)
	if err != nil {
		return fail(control.Failed, "write bm2.toml by hand (bm2.toml(5) has an example), or run a script as it is: bm2 start app.js", err)
	}
	if owner, closed := guess.DirUser(abs, a.c.Accounts); owner != "" {
		g.User, g.UserWhy = owner, closed
	}
	data := g.TOML()
	p, err := a.c.Projects().ParseDirProject(file, data, abs, false)
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
	for _, n := range g.Notes {
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
