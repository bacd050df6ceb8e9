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
	"github.com/bm2dev/bm2/internal/diff"
	"github.com/bm2dev/bm2/internal/outfile"
	"github.com/bm2dev/bm2/internal/pm2/convert"
	"github.com/bm2dev/bm2/internal/pm2/ecosystem"
	"github.com/bm2dev/bm2/internal/pm2/importer"
	"github.com/bm2dev/bm2/internal/trust"
)

// importFlags are bm2 import's flags.
type importFlags struct {
	env, out, mode string
	only           []string
	port           int
	dryRun, serve  bool
	force          bool
	// ServeFlags: the timeout with --serve; TrustFile, the operator read
	// the file and its apps may run as anyone; Replace, with --serve,
	// take names registered from another source.
	control.ServeFlags
}

// importCmd is `bm2 import [FILE]`.
func (a *App) importCmd(ctx context.Context, args []string, f importFlags) error {
	only, err := importOnly(f)
	if err != nil {
		return err
	}
	file, err := findEcosystem(args)
	if err != nil {
		return err
	}
	src, ev, err := importer.Load(ctx, file, importer.NodeDirs(a.c.Getenv("PATH"), a.c.RuntimeDirs), a.c.ReadFile)
	if err != nil {
		return fail(control.Invalid, loadHint(err), err)
	}
	if src.Dump && f.env != "" {
		return usageErr("import", "import: --env: a dump holds the environment PM2 ran each app with; --env is for ecosystem files")
	}
	if ev != nil {
		fmt.Fprintf(a.Out, "read %s: evaluated by %s %s as %s\n", file, ev.Node, ev.Version, ev.As)
		if ev.Closed != "" {
			fmt.Fprintf(a.Out, "note: %s cannot enter %s: the file was evaluated from outside it (process.cwd() still said %s), and could load no other file from there\n", ev.As, ev.Closed, ev.Closed)
		}
	} else {
		fmt.Fprintf(a.Out, "read %s\n", file)
	}
	// Who could have written the file decides as whom its apps may run
	// (package trust): importer.Load read it once through
	// trust.Read, which counted the owners of the file, of its directories
	// and of the links on the way, and the group and other write bits; a
	// file more than one user could have written speaks for no one. Its
	// owner decides whose the written bm2.toml is.
	if !src.OwnerKnown {
		return fail(control.Invalid, "", fmt.Errorf("%s: cannot tell who owns it", file))
	}
	sourceOwner, speaker := -1, -1
	if os.Geteuid() == 0 {
		sourceOwner, speaker = src.Owner, src.Speaker
	}
	origin := trust.Origin{File: file, UID: src.Speaker, Why: src.Why}
	if src.Speaker == trust.Nobody {
		fmt.Fprintf(a.Out, "note: %s speaks for no single user (%s): its apps may run only as their project's own account\n", file, src.Why)
	}
	out := ""
	if f.out != "" {
		if out, err = filepath.Abs(f.out); err != nil {
			return err
		}
	}
	opts := convert.Options{
		Env: f.env, Only: only, Port: f.port, Fork: f.mode == "fork", Out: out, NumCPU: a.c.NumCPU,
		Owner:   a.dirOwner,
		Runtime: func(kind config.Runtime, rp string) string { return a.importRuntime(ctx, kind, rp, speaker) },
	}
	if n := picked(src, only); f.port != 0 && n > 1 {
		return usageErr("import", "import: --port sets the port of one app, and %s has %d: add --only NAME", file, n)
	}
	res := convert.Map(src, opts)
	for _, n := range res.Notes {
		fmt.Fprintf(a.Out, "note: %s\n", n)
	}

	var problems []string
	var serveFiles []convert.Project
	for _, p := range res.Projects {
		if problem := a.importOne(ctx, p, origin, f, sourceOwner); problem != "" {
			problems = append(problems, problem)
			continue
		}
		serveFiles = append(serveFiles, p)
	}
	for _, r := range res.Refused {
		problems = append(problems, r.String())
		fmt.Fprintf(a.Err, "bm2: not imported: %s\n", r)
	}
	if f.serve {
		for _, p := range serveFiles {
			fmt.Fprintf(a.Out, "\n$ bm2 serve %s\n", p.File)
			if err := a.serveImported(ctx, p, origin, f); err != nil {
				a.report(err)
				problems = append(problems, fmt.Sprintf("%s: bm2 serve %s: %v", p.Name, p.File, err))
			}
		}
	}
	total := len(res.Projects) + len(res.Refused)
	if len(problems) > 0 {
		hint := "fix these and run bm2 import again (it changes nothing that is up to date)"
		if len(serveFiles) > 0 || (f.dryRun && len(res.Projects) > 0) {
			hint = "the other apps were imported; " + hint
		}
		return fail(control.Failed, hint,
			fmt.Errorf("%d of %d apps of %s not imported or not served", countApps(problems), total, file))
	}
	if !f.dryRun && !f.serve && len(res.Projects) > 0 {
		serve := a.c.Scope().Layout().Sudo + "bm2 serve"
		fmt.Fprintf(a.Out, "\nnext: `bm2 check %s`, then `%s %s` (or bm2 import --serve)\n", res.Projects[0].File, serve, res.Projects[0].File)
	}
	return nil
}

// loadHint is what to do when an ecosystem file could not be read: it
// is not a project file, so bm2 check has nothing to say about it.
func loadHint(err error) string {
	var nn *ecosystem.NoNodeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "name an existing file: bm2 import ecosystem.config.js, or bm2 import ~/.pm2/dump.pm2 for what pm2 save wrote"
	case errors.As(err, &nn):
		return "install Node.js 24 or newer where PATH finds it (bm2 import evaluates a JavaScript ecosystem file with it), then run bm2 import again"
	}
	// The file named first: the ecosystem file, or one it loads.
	return "fix the file named above, then run bm2 import again"
}

// importOne checks one imported project as serve will judge it, prints
// it and writes its bm2.toml (with --dry-run, only prints it). It returns
// the problem line when the project was not imported, else "".
func (a *App) importOne(ctx context.Context, p convert.Project, origin trust.Origin, f importFlags, sourceOwner int) string {
	// What the app asks of root, as serve will judge it (package
	// trust): the file speaks for its owner only.
	q, err := config.Parse(p.File, p.Data, config.Options{NumCPU: a.c.NumCPU, AnyName: true})
	if err == nil {
		if v := a.c.Verdict(ctx, q, origin, f.TrustFile); !v.OK() {
			err = v.Refused
		}
	}
	if err != nil {
		why := strings.ReplaceAll(err.Error(), "\n", "; ")
		fmt.Fprintf(a.Err, "bm2: not imported: %s: %s\n", p.Name, why)
		return p.Name + ": " + why
	}
	fmt.Fprintf(a.Out, "\n%s: %s -> %s\n", p.Name, p.Summary, p.File)
	for _, n := range p.Notes {
		fmt.Fprintf(a.Out, "  %s\n", n)
	}
	if len(p.Dropped) > 0 {
		fmt.Fprintf(a.Out, "  %s: left out %d variables of PM2's environment that were not the app's own: %s\n",
			p.Name, len(p.Dropped), strings.Join(p.Dropped, " "))
	}
	if f.dryRun {
		fmt.Fprintf(a.Out, "--- %s (not written: --dry-run)\n%s", p.File, p.Data)
		return ""
	}
	mode := os.FileMode(0o644)
	if p.Secrets {
		mode = 0o600 // [env] holds what the ecosystem file held: the owner's
	}
	owner := sourceOwner
	if f.out != "" {
		owner = -1 // a directory the caller named
	}
	wr, old, err := outfile.WriteImported(p.File, p.Data, mode, f.force, f.out != "", owner)
	switch {
	case err != nil:
		fmt.Fprintf(a.Err, "bm2: %s: %v\n", p.Name, err)
		return p.Name + ": " + err.Error()
	case wr == outfile.Unchanged:
		fmt.Fprintf(a.Out, "  %s is up to date\n", p.File)
	case wr == outfile.Differs:
		fmt.Fprintf(a.Out, "  %s differs from the import; not overwritten without --force:\n%s", p.File,
			indent(diff.Lines(p.File, p.File+" (imported)", old, p.Data)))
		return fmt.Sprintf("%s: %s differs from the import and was not overwritten (--force replaces it)", p.Name, p.File)
	case old != nil:
		fmt.Fprintf(a.Out, "  replaced %s (--force)\n", p.File)
	default:
		fmt.Fprintf(a.Out, "  wrote %s\n", p.File)
	}
	return ""
}

// importOnly checks import's flags and returns the apps --only names.
func importOnly(f importFlags) ([]string, error) {
	switch {
	case f.mode != "" && f.mode != "fork" && f.mode != "cluster":
		return nil, usageErr("import", "import: --mode takes fork (or cluster, the default for PM2 cluster apps), got %q", f.mode)
	case f.serve && f.dryRun:
		return nil, usageErr("import", "import: --dry-run changes nothing, so it cannot --serve")
	case f.port < 0 || f.port > 65535:
		return nil, usageErr("import", "import: --port must be 1 to 65535, got %d", f.port)
	}
	// An app's name is matched whole ("Custom Metrics"): pflag has
	// split the values at commas already (PM2's --only splits at
	// spaces too, so that it cannot pick such an app at all).
	var only []string
	for _, o := range f.only {
		if strings.TrimSpace(o) != "" {
			only = append(only, o)
		}
	}
	return only, nil
}

// picked counts the apps of src that import takes: those --only names,
// or all of them.
func picked(src convert.Source, only []string) int {
	n := 0
	for _, app := range convert.Names(src) {
		if len(only) == 0 || convert.Chosen(only, app) {
			n++
		}
	}
	return n
}

// countApps counts the distinct apps named in problem lines ("name: ...").
func countApps(problems []string) int {
	seen := map[string]bool{}
	for _, p := range problems {
		name, _, _ := strings.Cut(p, ": ")
		seen[name] = true
	}
	return len(seen)
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("    " + l)
		}
	}
	return b.String()
}

// findEcosystem is FILE, or the one ecosystem.config.* in the current
// directory (importer.Find).
func findEcosystem(args []string) (string, error) {
	if len(args) > 0 {
		return args[0], nil
	}
	file, err := importer.Find()
	var fe *importer.FindError
	switch {
	case errors.As(err, &fe) && len(fe.Found) == 0:
		return "", fail(control.BadArg, "name the file: bm2 import ecosystem.config.js, or bm2 import ~/.pm2/dump.pm2 for what pm2 save wrote", err)
	case err != nil:
		return "", fail(control.BadArg, "name the one to import", err)
	}
	return file, nil
}

// serveImported serves an imported project as bm2 serve would serve the
// file written for it, from what import validated in memory: the file
// on disk is its owner's, who could change it after the write, so it is
// never read again.
func (a *App) serveImported(ctx context.Context, ip convert.Project, origin trust.Origin, f importFlags) error {
	p, err := a.c.Projects().ParseDirProject(ip.File, ip.Data, filepath.Dir(ip.File), origin.UID != 0 && origin.UID != a.c.Scope().Layout().UID)
	if err != nil {
		return err
	}
	p.Source = filepath.Clean(ip.File)
	if err := a.c.Vouch(ctx, p, origin, f.TrustFile); err != nil {
		return err
	}
	return a.c.ServeProject(ctx, p, ip.File, f.ServeFlags)
}

// dirOwner names a directory's owner when it is not root
// (importer.DirOwner), for convert.Options.Owner.
func (a *App) dirOwner(dir string) string { return importer.DirOwner(dir, a.c.Accounts) }

// importRuntime checks the runtime an imported project would run
// (importer.Runtime), asking its --version as owner.
func (a *App) importRuntime(ctx context.Context, kind config.Runtime, runtimePath string, owner int) string {
	h := importer.Host{Dirs: a.c.RuntimeDirs, Replaceable: a.c.Replaceable, Version: a.c.RuntimeVersion}
	return importer.Runtime(ctx, h, kind, runtimePath, owner)
}
