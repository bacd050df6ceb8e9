package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/units"
)

// ProjectFileName is the project file bm2 serve and bm2 check read in a
// project dir.
const ProjectFileName = "bm2.toml"

// entry is one project found along the search path.
type entry = config.Entry

// registry reads every registered project, in name order, as the
// generator sees them (config.Load: the name that sorts first keeps a
// contested port range).
func (a *App) registry() ([]entry, config.Loaded) {
	l := config.Load(a.searchPath(), a.configOptions())
	return l.Entries, l
}

// held returns the valid registered projects other than the one named.
func held(entries []entry, except string) []*config.Project {
	var out []*config.Project
	for _, e := range entries {
		if e.Project != nil && e.Name != except {
			out = append(out, e.Project)
		}
	}
	return out
}

// findProject returns the registered project of that name; a missing one
// is an ExitNoProject error.
func (a *App) findProject(name string) (entry, error) {
	entries, _ := a.registry()
	for _, e := range entries {
		if e.Name == name {
			return e, nil
		}
	}
	hint := "`bm2 list` shows the registered projects; `bm2 serve` in a project dir registers one"
	where := strings.Join(a.searchPath(), ":")
	if a.user() {
		where = a.layout().Short(where) + ", your projects (user scope)"
		if _, ok := config.DiscoverOne(a.systemSearchPath(), name); ok {
			hint = fmt.Sprintf("%s is a system project: add --system (`bm2 --system status %s`; changing it needs sudo)", name, name)
		}
	}
	return entry{}, fail(ExitNoProject, hint,
		fmt.Errorf("no such project: %s (nothing named %s.toml in %s)", name, name, where))
}

// resolveUnit turns "api" or "api-2" into the project and either its
// target (index -1) or one instance; "api-surge" is units.Surge, which
// only logs and events take (refuseSurge).
func (a *App) resolveUnit(arg string) (entry, int, error) {
	e, err := a.findProject(arg)
	if err == nil {
		return e, -1, nil
	}
	name, i, ok := units.ParseInstance(arg)
	if !ok {
		return entry{}, 0, err
	}
	pe, perr := a.findProject(name)
	if perr != nil {
		return entry{}, 0, err
	}
	if i == units.Surge && (pe.Project == nil || pe.Project.Mode != config.Cluster) {
		return entry{}, 0, fail(ExitNoProject, fmt.Sprintf("its instances are %s-0 to %s-%d", name, name, max(pe.Project.Instances, 1)-1),
			fmt.Errorf("no such instance: %s (only cluster-mode projects have a surge instance)", arg))
	}
	if pe.Project != nil && i >= pe.Project.Instances {
		return entry{}, 0, fail(ExitNoProject, fmt.Sprintf("its instances are %s-0 to %s-%d", name, name, pe.Project.Instances-1),
			fmt.Errorf("no such instance: %s (project %s has %d)", arg, name, pe.Project.Instances))
	}
	return pe, i, nil
}

// usable returns the project of an entry, or the reason it has no units.
func usable(e entry) (*config.Project, error) {
	if e.Err != nil {
		return nil, fail(ExitInvalid, fmt.Sprintf("fix %s and run `bm2 check %s`; bm2 list shows why it is invalid", e.Path, e.Path),
			fmt.Errorf("project %s is invalid, so systemd has no units for it: %w", e.Name, e.Err))
	}
	return e.Project, nil
}

// dirProject reads a project dir's bm2.toml the way bm2 serve registers
// it: "name" is required, "cwd" defaults to the (absolute) dir, and the
// result is registered as <ConfigDir>/<name>.toml. Errors name file as
// given, with its own line numbers.
func (a *App) dirProject(file, absDir string) (*config.Project, error) {
	data, foreign, err := a.readProjectFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fail(ExitInvalid,
			fmt.Sprintf("write a %s in the project dir (see bm2.toml(5)), or name the project dir: bm2 serve /srv/api", ProjectFileName),
			fmt.Errorf("no project file %s", file))
	}
	if err != nil {
		return nil, fmt.Errorf("read project file: %w", err)
	}
	opts := a.projectDirOptions(absDir)
	opts.Foreign = foreign
	p, err := config.Parse(file, data, opts)
	if err != nil {
		var es config.Errors
		if errors.As(err, &es) {
			for _, e := range es {
				if e.Key == "name" && errors.Is(e, config.ErrMissing) {
					e.Msg = fmt.Sprintf("required: the project's name, e.g. name = %q (bm2 serve registers it as %s/<name>.toml)",
						suggestName(absDir), a.Paths.ConfigDir)
				}
			}
		}
		return nil, err
	}
	p.File = filepath.Join(a.Paths.ConfigDir, p.Name+".toml")
	return p, nil
}

// suggestName offers a project name for a dir: its base name when that is
// a valid name.
func suggestName(dir string) string {
	base := strings.ToLower(filepath.Base(dir))
	if base == "" || base == "/" || base == "." {
		return "api"
	}
	var b strings.Builder
	for _, r := range base {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		}
	}
	if s := strings.TrimLeft(b.String(), "-_"); s != "" {
		return s
	}
	return "api"
}

// refuseSurge is the error for a command that does not manage the surge
// instance by itself.
func refuseSurge(name, arg string) error {
	return fail(ExitNoProject, fmt.Sprintf("`bm2 reload %s` starts and retires it; `bm2 logs %s` shows its output", name, arg),
		fmt.Errorf("%s is the surge instance of %s's reloads, not an instance to manage by itself", arg, name))
}
