package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/kube"
	"github.com/bm2dev/bm2/internal/outfile"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/wording"
)

// exportFlags are `bm2 export kube`'s flags.
type exportFlags struct {
	image, namespace, out, gateway, prefix string
	names                                  []string
	ordinal, secrets                       bool
}

// exportCmd is `bm2 export kube [name | dir | file]...`: the edge around
// package kube. It reads the project files (their public part, and the
// private part where it may: the [env] names), renders every file before
// it writes any (an unmappable project leaves nothing behind), and prints
// the manifests, or with --out writes a file per project, each replaced
// whole, the Secrets with mode 0600.
func (a *App) exportCmd(ctx context.Context, args []string, f exportFlags) error {
	if args[0] != "kube" {
		return usageErr("export", "export: unknown target %q: want kube", args[0])
	}
	if f.secrets && f.out == "" {
		return usageErr("export", "export kube: --secrets writes the values of [env] to a file of their own, mode 0600, and never prints them: give --out DIR")
	}
	aps, err := a.argProjects("export", "bm2 export kube /srv/api --image IMAGE", args[1:])
	if err != nil {
		return err
	}
	sources := make([]kube.Source, len(aps))
	for i, ap := range aps {
		sources[i] = kube.Source{Project: ap.p, File: ap.file, Lines: ap.lines}
	}
	res, err := kube.Export(sources, kube.Options{
		Image: f.image, Namespace: f.namespace, Ordinal: f.ordinal, Gateway: f.gateway,
		Hostnames: f.names, PathPrefix: f.prefix, Secrets: f.secrets,
	})
	if err != nil {
		return kubeErr("export kube", err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(a.Err, "bm2: warning: %s\n", termtext.Escape(fmt.Sprint(w)))
	}
	if f.gateway != "" {
		for _, ap := range aps {
			if ap.p.IsWorker() {
				fmt.Fprintf(a.Err, "bm2: note: %s is a worker (no port): it has no Service and no HTTPRoute to Gateway %s (the comment at the top of its manifests says why)\n",
					ap.p.Name, termtext.Escape(f.gateway))
			}
		}
	}
	if !f.secrets {
		for _, ap := range aps {
			if len(ap.p.Env) > 0 {
				fmt.Fprintf(a.Err, "bm2: note: %s reads [env] from Secret %s, which you create (the comment at the top of its manifests says how), or export with --secrets --out DIR\n",
					ap.p.Name, kube.EnvSecret(ap.p.Name))
			}
		}
	}
	if f.out == "" {
		if _, err := a.Out.Write(res.Manifests()); err != nil {
			return fmt.Errorf("write the manifests: %w", err)
		}
		return nil
	}
	return a.writeExport(f.out, res)
}

// writeExport writes every file of the export into dir (made if
// missing): each atomically, with its mode, and one that holds the same
// bytes with the same mode already is left alone.
func (a *App) writeExport(dir string, res *kube.Result) error {
	if !filepath.IsAbs(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fail(control.Failed, "give --out a directory you may write", fmt.Errorf("export kube: %w", err))
		}
		dir = abs
	}
	for _, f := range res.Files {
		path := filepath.Join(dir, f.Name)
		what := "the manifests of " + f.Project
		if f.Secret {
			what = "the Secret of " + f.Project
		}
		changed, err := outfile.WriteIfChanged(path, f.Data, f.Perm(), what, outfile.WriteOptions{Secret: f.Secret, Create: true})
		if err != nil {
			return err
		}
		if !changed {
			fmt.Fprintf(a.Out, "unchanged: %s\n", path)
			continue
		}
		mode := ""
		if f.Secret {
			mode = ", mode 0600: keep it out of version control"
		}
		fmt.Fprintf(a.Out, "wrote %s (%s for %s%s)\n", path, wording.JoinWords(f.Kinds), f.Project, mode)
	}
	// A Secret an earlier export wrote for a project that has no [env]
	// (or was exported without --secrets) now: kubectl apply -f DIR
	// would apply its old values again.
	secret := map[string]bool{}
	for _, f := range res.Files {
		secret[f.Project] = secret[f.Project] || f.Secret
	}
	for _, f := range res.Files {
		if f.Secret || secret[f.Project] {
			continue
		}
		stale := filepath.Join(dir, f.Project+".secret.yaml")
		if _, err := os.Lstat(stale); err == nil {
			fmt.Fprintf(a.Err, "bm2: warning: %s is an earlier export's Secret of %s, which this export does not write: remove it, or `kubectl apply -f %s` applies its values again\n",
				termtext.Escape(stale), f.Project, termtext.Escape(dir))
		}
	}
	fmt.Fprintf(a.Out, "apply them: kubectl apply -f %s\n", termtext.Escape(dir))
	return nil
}

// kubeErr maps package kube's errors to exit codes: a bad option is a
// usage error, a project it cannot map an invalid project file.
func kubeErr(cmd string, err error) error {
	var oe *kube.OptionError
	if errors.As(err, &oe) {
		return usageErr(strings.Fields(cmd)[0], "%s: %v", cmd, err)
	}
	var es config.Errors
	if errors.As(err, &es) {
		what := "the project as its file says"
		for _, e := range es {
			if e.File != es[0].File {
				what = "the projects as their files say"
			}
		}
		// A route alone is refused for what it would route to (a name, a
		// worker's missing port), not for what a pod could run.
		lead := "a pod cannot run " + what
		if cmd == "gateway httproute" {
			lead = "no HTTPRoute can send requests to " + what
		}
		return fail(control.Invalid, "change the project file (bm2.toml(5)), or leave the project out",
			fmt.Errorf("%s: %s: %s:\n  %s", cmd, wording.Plural(len(es), "problem", "problems"), lead,
				strings.ReplaceAll(termtext.EscapeLines(err.Error()), "\n", "\n  ")))
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

// httpRouteCmd is `bm2 gateway httproute`: the HTTPRoute of each project
// alone, for a cluster that runs their Services already.
func (a *App) httpRouteCmd(args []string, opts kube.Options, out string) error {
	aps, err := a.argProjects("gateway", "bm2 gateway httproute /srv/api/bm2.toml --gateway NAME", args)
	if err != nil {
		return err
	}
	sources := make([]kube.Source, len(aps))
	names := make([]string, len(aps))
	for i, ap := range aps {
		sources[i] = kube.Source{Project: ap.p, File: ap.file, Lines: ap.lines}
		names[i] = ap.p.Name
	}
	data, err := kube.Routes(sources, opts)
	if err != nil {
		return kubeErr("gateway httproute", err)
	}
	if out == "" {
		if _, err := a.Out.Write(data); err != nil {
			return fmt.Errorf("write the HTTPRoutes: %w", err)
		}
		return nil
	}
	changed, err := outfile.WriteIfChanged(out, data, 0o644, "the HTTPRoutes", outfile.WriteOptions{})
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(a.Out, "unchanged: %s\n", out)
		return nil
	}
	sort.Strings(names)
	fmt.Fprintf(a.Out, "wrote %s (httproute for %s); apply it: kubectl apply -f %s\n", out, wording.JoinWords(names), out)
	return nil
}
