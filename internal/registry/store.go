package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/units"
)

// ProjectFileName is the project file bm2 serve and bm2 check read in a
// project dir.
const ProjectFileName = "bm2.toml"

// Store is the registered projects of one scope as a command reads them:
// the scope's layout (its config dir and locks), where the project files
// are looked for, how they parse, and how a project dir's file is read.
type Store struct {
	Layout layout.Layout
	// SearchPath is where the scope's project files are
	// ($BM2_CONFIG_PATH, or the layout's own).
	SearchPath []string
	// Options are the scope's parse options (scope.Options).
	Options config.Options
	// SystemSearchPath is where user scope looks for system projects,
	// to say that a name it lacks is one (nil: config.DefaultSearchPath).
	SystemSearchPath []string
	// ReadFile reads a project dir's file once, and says who could
	// have written it (trust.Read).
	ReadFile func(path string) (trust.File, error)
}

// Missing is a project or instance that is not registered: Hint says
// where to look (the bm2 command exits with its "no such project"
// status).
type Missing struct {
	Hint string
	Err  error
}

func (m *Missing) Error() string { return m.Err.Error() }
func (m *Missing) Unwrap() error { return m.Err }

// Entries reads every registered project, in name order, as the
// generator sees them (config.Load: the name that sorts first keeps a
// contested port range).
func (s Store) Entries() ([]config.Entry, config.Loaded) {
	l := config.Load(s.SearchPath, s.Options)
	return l.Entries, l
}

// Find returns the registered project of that name; a missing one is a
// *Missing.
func (s Store) Find(name string) (config.Entry, error) {
	entries, _ := s.Entries()
	for _, e := range entries {
		if e.Name == name {
			return e, nil
		}
	}
	hint := "`bm2 list` shows the registered projects; `bm2 serve` in a project dir registers one"
	where := strings.Join(s.SearchPath, ":")
	if s.Layout.IsUser() {
		where = s.Layout.Short(where) + ", your projects (user scope)"
		if _, ok := config.DiscoverOne(scope.SearchPath(s.SystemSearchPath), name); ok {
			hint = fmt.Sprintf("%s is a system project: add --system (`bm2 --system status %s`; changing it needs sudo)", name, name)
		}
	}
	return config.Entry{}, &Missing{Hint: hint,
		Err: fmt.Errorf("no such project: %s (nothing named %s.toml in %s)", name, name, where)}
}

// Resolve turns "api" or "api-2" into the project and either its target
// (index -1) or one instance; "api-surge" is units.Surge, which only logs
// and events take.
func (s Store) Resolve(arg string) (config.Entry, int, error) {
	e, err := s.Find(arg)
	if err == nil {
		return e, -1, nil
	}
	name, i, ok := units.ParseInstance(arg)
	if !ok {
		return config.Entry{}, 0, err
	}
	pe, perr := s.Find(name)
	if perr != nil {
		return config.Entry{}, 0, err
	}
	if i == units.Surge && (pe.Project == nil || pe.Project.Mode != config.Cluster) {
		return config.Entry{}, 0, &Missing{Hint: fmt.Sprintf("its instances are %s-0 to %s-%d", name, name, max(pe.Project.Instances, 1)-1),
			Err: fmt.Errorf("no such instance: %s (only cluster-mode projects have a surge instance)", arg)}
	}
	if pe.Project != nil && i >= pe.Project.Instances {
		return config.Entry{}, 0, &Missing{Hint: fmt.Sprintf("its instances are %s-0 to %s-%d", name, name, pe.Project.Instances-1),
			Err: fmt.Errorf("no such instance: %s (project %s has %d)", arg, name, pe.Project.Instances)}
	}
	return pe, i, nil
}

// DirProject reads a project dir's bm2.toml the way bm2 serve registers
// it: "name" is required, "cwd" defaults to the (absolute) dir, and the
// result is registered as <ConfigDir>/<name>.toml. The file is read once
// (ReadFile), and the project's Source is its real path. Errors name
// file as given, with its own line numbers. The origin says who speaks
// for the file (trust).
func (s Store) DirProject(file, absDir string) (*config.Project, trust.Origin, error) {
	f, err := s.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, trust.Origin{}, &Refusal{
			Hint: fmt.Sprintf("write a %s in the project dir (see bm2.toml(5)), or name the project dir: bm2 serve /srv/api", ProjectFileName),
			Err:  fmt.Errorf("no project file %s", file)}
	}
	if err != nil {
		return nil, trust.Origin{}, fmt.Errorf("read project file: %w", err)
	}
	p, err := s.ParseDirProject(file, f.Data, absDir, f.Speaker() != 0 && f.Speaker() != s.Layout.UID)
	if err != nil {
		return nil, trust.Origin{}, err
	}
	p.Source = f.Path
	named := file
	if abs, err := filepath.Abs(file); err == nil {
		named = abs // what the refusals name: sudo runs it anywhere
	}
	return p, trust.OriginOf(named, f), nil
}

// ParseDirProject parses a project dir's file from memory (see
// DirProject).
func (s Store) ParseDirProject(file string, data []byte, absDir string, foreign bool) (*config.Project, error) {
	opts := s.Options
	opts.Cwd, opts.AnyName = absDir, true
	opts.Foreign = foreign
	p, err := config.Parse(file, data, opts)
	if err != nil {
		var es config.Errors
		if errors.As(err, &es) {
			for _, e := range es {
				if e.Key == "name" && errors.Is(e, config.ErrMissing) {
					e.Msg = fmt.Sprintf("required: the project's name, e.g. name = %q (bm2 serve registers it as %s/<name>.toml)",
						suggestName(absDir), s.Layout.ConfigDir)
				}
			}
		}
		return nil, err
	}
	p.File = filepath.Join(s.Layout.ConfigDir, p.Name+".toml")
	return p, nil
}

// CheckRegistrable makes sure the file serve writes for p is the one
// systemd will read: the config dir is on the search path and no file of
// the same name comes before it. A refusal is a *Blocked.
func (s Store) CheckRegistrable(p *config.Project) error {
	sp, configDir := s.SearchPath, s.Layout.ConfigDir
	idx := -1
	for i, d := range sp {
		if filepath.Clean(d) == filepath.Clean(configDir) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return &Blocked{Hint: "unset $" + config.SearchPathEnv + ", or include " + configDir + " in it",
			Err: fmt.Errorf("%s is not on the project search path (%s), so the generator would never read %s",
				configDir, strings.Join(sp, ":"), p.File)}
	}
	for _, d := range sp[:idx] {
		f := filepath.Join(d, p.Name+".toml")
		if _, err := os.Lstat(f); err == nil {
			return &Blocked{Hint: fmt.Sprintf("remove %s first, or manage project %s through it", f, p.Name),
				Err: fmt.Errorf("project %s is defined by %s, which comes before %s on the search path and would hide %s",
					p.Name, f, configDir, p.File)}
		}
	}
	return nil
}

// Deletable is the registered project bm2 delete may remove: the one
// serve registered (Layout.RegisteredFile), neither masked nor defined
// by another file on the search path (found). A refusal is a *Blocked,
// or a *Missing project.
func (s Store) Deletable(name string, found config.Found) (config.Entry, error) {
	regFile := s.Layout.RegisteredFile(name)
	for _, m := range found.Masked {
		if config.Stem(m) == name {
			return config.Entry{}, &Blocked{Hint: fmt.Sprintf("remove %s by hand if you want the project it hides back", m),
				Err: fmt.Errorf("%s masks project %s (an empty file or a link to /dev/null); bm2 delete leaves masks alone", m, name)}
		}
	}
	e, err := s.Find(name)
	if err != nil {
		return config.Entry{}, err
	}
	if filepath.Clean(e.Path) != filepath.Clean(regFile) {
		return config.Entry{}, &Blocked{
			Hint: fmt.Sprintf("remove %s yourself (or mask it with an empty %s), then run `%s daemon-reload`", e.Path, regFile, s.Layout.Systemctl),
			Err:  fmt.Errorf("project %s is defined by %s, not %s: bm2 delete only removes what bm2 serve registered", name, e.Path, regFile)}
	}
	return e, nil
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

// TryLockProject takes the reload lock of the named project
// (TryLockProject in the store's scope).
func (s Store) TryLockProject(name string) (lock *ProjectLock, holder int, err error) {
	return TryLockProject(s.Layout, name)
}
