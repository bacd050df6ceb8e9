package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/gateway"
	"github.com/bm2dev/bm2/internal/outfile"
	"github.com/bm2dev/bm2/internal/preflight"
	"github.com/bm2dev/bm2/internal/wording"
)

// routeKind is `bm2 gateway httproute`: a Kubernetes Gateway API
// HTTPRoute (package kube) rather than a gateway's own configuration.
const routeKind = "httproute"

// gatewayCmd is `bm2 gateway <nginx | caddy> [name | file | dir]...`: the
// edge around package gateway, which does the work. It reads project
// files (their public part: anyone can run it) and prints, or writes with
// out, the configuration.
func (a *App) gatewayCmd(ctx context.Context, args []string, opts gateway.Options, out string) error {
	kind := gateway.Kind(args[0])
	known := false
	for _, k := range gateway.Kinds() {
		known = known || k == kind
	}
	if !known {
		return usageErr("gateway", "gateway: unknown gateway %q: want nginx, caddy or %s", args[0], routeKind)
	}
	projects, err := a.gatewayProjects(args[1:])
	if err != nil {
		return err
	}
	data, err := gateway.Render(kind, projects, opts)
	if err != nil {
		var pe *gateway.ProjectError
		if errors.As(err, &pe) {
			return fail(control.Invalid, "fix the project file, or leave the project out", fmt.Errorf("gateway %s: %w", kind, err))
		}
		return usageErr("gateway", "gateway %s: %v", kind, err)
	}
	if out == "" {
		if _, err := a.Out.Write(data); err != nil {
			return fmt.Errorf("write the %s configuration: %w", kind, err)
		}
		return nil
	}
	names := make([]string, len(projects))
	for i, p := range projects {
		names[i] = p.Name
	}
	sort.Strings(names)
	changed, err := outfile.WriteIfChanged(out, data, 0o644, fmt.Sprintf("the %s configuration", kind), outfile.WriteOptions{})
	if err != nil {
		return err
	}
	if !changed {
		fmt.Fprintf(a.Out, "unchanged: %s\n", out)
		return nil
	}
	apply := "nginx -t && nginx -s reload"
	if kind == gateway.KindCaddy {
		apply = "caddy reload (or systemctl reload caddy)"
	}
	fmt.Fprintf(a.Out, "wrote %s (%s for %s); apply it: %s\n", out, kind, wording.JoinWords(names), apply)
	return nil
}

// argProject is a project named on the command line, with the file it
// was read from and the lines of that file's keys (for messages that
// name them).
type argProject struct {
	p     *config.Project
	file  string
	lines map[string]int
}

func projectsOf(aps []argProject) []*config.Project {
	out := make([]*config.Project, len(aps))
	for i, ap := range aps {
		out[i] = ap.p
	}
	return out
}

// gatewayProjects resolves the gateway's arguments: every registered
// project when there are none; otherwise each is a project dir (its
// bm2.toml), a project file, or the name of a registered project.
func (a *App) gatewayProjects(args []string) ([]*config.Project, error) {
	aps, err := a.argProjects("gateway", "bm2 gateway nginx /srv/api/bm2.toml", args)
	return projectsOf(aps), err
}

// argProjects resolves the project arguments of cmd (gateway, export):
// every registered project when there are none (and then one that is
// invalid is an error: the output would leave it out); otherwise each is
// a project dir (its bm2.toml), a project file, or the name of a
// registered project. example is the hint's command when nothing is
// registered.
func (a *App) argProjects(cmd, example string, args []string) ([]argProject, error) {
	if len(args) == 0 {
		entries, _ := a.c.Projects().Entries()
		if len(entries) == 0 {
			return nil, fail(control.NoProject, "`bm2 serve` in a project dir registers one; or name a project file: "+example,
				fmt.Errorf("%s: no registered projects (nothing in %s)", cmd, strings.Join(a.c.Projects().SearchPath, ":")))
		}
		var out []argProject
		var bad []string
		for _, e := range entries {
			if e.Err != nil {
				bad = append(bad, fmt.Sprintf("%s (%s): %v", e.Name, e.Path, e.Err))
				continue
			}
			out = append(out, argProject{p: e.Project, file: e.Path, lines: a.keyLines(e.Path)})
		}
		if len(bad) > 0 {
			// A gateway (or a cluster) without one of the projects would
			// drop its traffic: print nothing rather than that.
			return nil, fail(control.Invalid, "fix them (`bm2 check NAME`), or name the projects",
				fmt.Errorf("%s: %s cannot be served:\n  %s", cmd, wording.Plural(len(bad), "registered project", "registered projects"), strings.Join(bad, "\n  ")))
		}
		return out, nil
	}
	var out []argProject
	seen := map[string]string{}
	for _, arg := range args {
		p, from, origin, err := preflight.Resolve(a.c, arg, true, false)
		if err != nil {
			return nil, err
		}
		if from == "" {
			from = arg
		}
		if prev, ok := seen[p.Name]; ok {
			return nil, usageErr(cmd, "%s: project %s given twice (%s and %s)", cmd, p.Name, prev, from)
		}
		seen[p.Name] = from
		lines := origin.Lines
		if lines == nil {
			lines = a.keyLines(from) // a registered project's file
		}
		out = append(out, argProject{p: p, file: from, lines: lines})
	}
	return out, nil
}

// keyLines is the line of each key the project file sets, for messages;
// nil when it cannot be read.
func (a *App) keyLines(file string) map[string]int {
	f, err := a.c.ReadFile(file)
	if err != nil {
		return nil
	}
	return config.KeyLines(f.Data)
}
