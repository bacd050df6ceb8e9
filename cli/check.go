package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/probehelper"
	"github.com/bm2dev/bm2/units"
)

// check is `bm2 check [dir | file | name]`.
func (a *App) check(ctx context.Context, args []string) error {
	p, label, err := a.checkTarget(args)
	if err != nil {
		return err
	}
	var problems []string
	w := a.Out

	fmt.Fprintf(w, "config ok: %s\n", p.Summary())
	if p.Notify.Webhook == "" {
		fmt.Fprintln(w, "notify: disabled")
	} else {
		fmt.Fprintf(w, "notify: webhook %s (level %s)\n", p.Notify.Webhook, p.Notify.Level)
	}

	r := p.Ports()
	ports := make([]int, 0, r.Hi-r.Lo+1)
	for port := r.Lo; port <= r.Hi; port++ {
		ports = append(ports, port)
	}
	states, err := a.CheckPorts(ctx, p.User, ports)
	if err != nil {
		fmt.Fprintf(w, "ports %s: cannot probe: %v\n", r, err)
		problems = append(problems, fmt.Sprintf("ports %s could not be probed: %v", r, err))
	} else {
		for _, line := range portLines(ports, states) {
			fmt.Fprintln(w, line)
		}
		var own map[int]bool
		for i, s := range states {
			if s != probehelper.Exclusive {
				continue
			}
			if own == nil {
				own = a.ownPorts(ctx, p.Name)
			}
			if !own[ports[i]] {
				problems = append(problems, fmt.Sprintf("port %d is held by an exclusive listener that is not one of %s's instances: stop that program or choose another port", ports[i], p.Name))
			}
		}
	}

	rc := a.checkRuntime(ctx, p)
	fmt.Fprintln(w, rc.Line())
	if rc.Problem != "" {
		problems = append(problems, "runtime "+rc.Problem+": "+runtimeAdvice(p))
	}

	entries, _ := a.registry()
	if err := config.CheckConflict(p, held(entries, p.Name)); err != nil {
		fmt.Fprintln(w, err.Error())
		var ce *config.ConflictError
		if errors.As(err, &ce) {
			problems = append(problems, fmt.Sprintf("%s (registered in %s): choose another port", err, ce.HolderFile))
		} else {
			problems = append(problems, err.Error())
		}
	}

	if len(problems) > 0 {
		noun := "problem"
		if len(problems) > 1 {
			noun = "problems"
		}
		return fail(ExitInvalid, "fix them and run `bm2 check` again",
			fmt.Errorf("check found %d %s in %s:\n  %s", len(problems), noun, label, strings.Join(problems, "\n  ")))
	}
	return nil
}

// checkTarget resolves check's argument to a validated project and the
// file name to show.
func (a *App) checkTarget(args []string) (*config.Project, string, error) {
	arg := ProjectFileName
	if len(args) > 0 {
		arg = args[0]
	}
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		return a.checkDirFile(filepath.Join(arg, ProjectFileName))
	case err == nil && filepath.Base(arg) == ProjectFileName && !a.onSearchPath(arg):
		return a.checkDirFile(arg)
	case err == nil:
		data, rerr := os.ReadFile(arg)
		if rerr != nil {
			return nil, "", fmt.Errorf("read project file: %w", rerr)
		}
		p, perr := config.Parse(arg, data, a.NumCPU)
		return p, arg, perr
	case errors.Is(err, fs.ErrNotExist) && len(args) > 0 && !strings.ContainsAny(arg, "/.") && arg != ProjectFileName:
		e, ferr := a.findProject(arg)
		if ferr != nil {
			return nil, "", fail(ExitNoProject, "pass a project dir, a project file or the name of a registered project (`bm2 list`)",
				fmt.Errorf("no file, dir or registered project named %s", arg))
		}
		if e.Project == nil {
			var ce *config.ConflictError
			if !errors.As(e.Err, &ce) {
				return nil, e.Path, e.Err
			}
			// A refused range is reported by the conflict check below.
			data, _ := os.ReadFile(e.Path)
			p, perr := config.Parse(e.Path, data, a.NumCPU)
			return p, e.Path, perr
		}
		return e.Project, e.Path, nil
	case errors.Is(err, fs.ErrNotExist) && len(args) == 0:
		return a.checkDirFile(arg)
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", fail(ExitInvalid, "pass a project dir, a project file or the name of a registered project (`bm2 list`)",
			fmt.Errorf("%s does not exist", arg))
	default:
		return nil, "", fmt.Errorf("check %s: %w", arg, err)
	}
}

func (a *App) checkDirFile(file string) (*config.Project, string, error) {
	abs, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, file, fmt.Errorf("resolve %s: %w", file, err)
	}
	p, err := a.dirProject(file, abs)
	return p, file, err
}

// onSearchPath tells whether a file lives in one of the search path's
// directories (a registered project file rather than a project dir's).
func (a *App) onSearchPath(file string) bool {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return false
	}
	for _, d := range a.searchPath() {
		if ad, err := filepath.Abs(d); err == nil && ad == dir {
			return true
		}
	}
	return false
}

// ownPorts returns the ports that the registered project of that name
// holds through instances systemd runs right now. It is best effort: when
// systemd is not reachable (check works without it), nothing is known to
// be the project's own.
func (a *App) ownPorts(ctx context.Context, name string) map[int]bool {
	own := map[int]bool{}
	e, err := a.findProject(name)
	if err != nil || e.Project == nil {
		return own
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	sd, err := a.Connect(ctx)
	if err != nil {
		return own
	}
	defer sd.Close()
	names := make([]string, e.Project.Instances)
	for i := range names {
		names[i] = units.Instance(name, i)
	}
	statuses, err := sd.Units(ctx, names)
	if err != nil {
		return own
	}
	for i, u := range statuses {
		if u.MainPID != 0 { // a live main process is what holds the port
			own[e.Project.InstancePort(i)] = true
		}
	}
	return own
}
