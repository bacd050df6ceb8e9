package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/units"
)

// ProjectFileName is the project file bm2 serve and bm2 check read in a
// project dir.
const ProjectFileName = "bm2.toml"

// entry is one project found along the search path.
type entry = config.Entry

// Registry reads every registered project, in name order, as the
// generator sees them (config.Load: the name that sorts first keeps a
// contested port range).
func (c *Client) Registry() ([]entry, config.Loaded) {
	l := config.Load(c.SearchPath(), c.Scope().Options())
	return l.Entries, l
}

// FindProject returns the registered project of that name; a missing one
// is a NoProject error.
func (c *Client) FindProject(name string) (entry, error) {
	entries, _ := c.Registry()
	for _, e := range entries {
		if e.Name == name {
			return e, nil
		}
	}
	hint := "`bm2 list` shows the registered projects; `bm2 serve` in a project dir registers one"
	where := strings.Join(c.SearchPath(), ":")
	if c.Scope().IsUser() {
		where = c.Scope().Layout().Short(where) + ", your projects (user scope)"
		if _, ok := config.DiscoverOne(scope.SearchPath(c.SystemSearchPath), name); ok {
			hint = fmt.Sprintf("%s is a system project: add --system (`bm2 --system status %s`; changing it needs sudo)", name, name)
		}
	}
	return entry{}, fail(NoProject, hint,
		fmt.Errorf("no such project: %s (nothing named %s.toml in %s)", name, name, where))
}

// ResolveUnit turns "api" or "api-2" into the project and either its
// target (index -1) or one instance; "api-surge" is units.Surge, which
// only logs and events take (refuseSurge).
func (c *Client) ResolveUnit(arg string) (entry, int, error) {
	e, err := c.FindProject(arg)
	if err == nil {
		return e, -1, nil
	}
	name, i, ok := units.ParseInstance(arg)
	if !ok {
		return entry{}, 0, err
	}
	pe, perr := c.FindProject(name)
	if perr != nil {
		return entry{}, 0, err
	}
	if i == units.Surge && (pe.Project == nil || pe.Project.Mode != config.Cluster) {
		return entry{}, 0, fail(NoProject, fmt.Sprintf("its instances are %s-0 to %s-%d", name, name, max(pe.Project.Instances, 1)-1),
			fmt.Errorf("no such instance: %s (only cluster-mode projects have a surge instance)", arg))
	}
	if pe.Project != nil && i >= pe.Project.Instances {
		return entry{}, 0, fail(NoProject, fmt.Sprintf("its instances are %s-0 to %s-%d", name, name, pe.Project.Instances-1),
			fmt.Errorf("no such instance: %s (project %s has %d)", arg, name, pe.Project.Instances))
	}
	return pe, i, nil
}

// Usable returns the project of an entry, or the reason it has no units.
func Usable(e entry) (*config.Project, error) {
	if e.Err != nil {
		return nil, fail(Invalid, fmt.Sprintf("fix %s and run `bm2 check %s`; bm2 list shows why it is invalid", e.Path, e.Path),
			fmt.Errorf("project %s is invalid, so systemd has no units for it: %w", e.Name, e.Err))
	}
	return e.Project, nil
}

// DirProject reads a project dir's bm2.toml the way bm2 serve registers
// it: "name" is required, "cwd" defaults to the (absolute) dir, and the
// result is registered as <ConfigDir>/<name>.toml. The file is read once
// (trust.Read), and the project's Source is its real path. Errors name
// file as given, with its own line numbers. The origin says who speaks
// for the file (vouch).
func (c *Client) DirProject(file, absDir string) (*config.Project, trust.Origin, error) {
	f, err := c.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, trust.Origin{}, fail(Invalid,
			fmt.Sprintf("write a %s in the project dir (see bm2.toml(5)), or name the project dir: bm2 serve /srv/api", ProjectFileName),
			fmt.Errorf("no project file %s", file))
	}
	if err != nil {
		return nil, trust.Origin{}, fmt.Errorf("read project file: %w", err)
	}
	p, err := c.ParseDirProject(file, f.Data, absDir, err == nil && f.Speaker() != 0 && f.Speaker() != c.Scope().Layout().UID)
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
func (c *Client) ParseDirProject(file string, data []byte, absDir string, foreign bool) (*config.Project, error) {
	opts := c.Scope().Options()
	opts.Cwd, opts.AnyName = absDir, true
	opts.Foreign = foreign
	p, err := config.Parse(file, data, opts)
	if err != nil {
		var es config.Errors
		if errors.As(err, &es) {
			for _, e := range es {
				if e.Key == "name" && errors.Is(e, config.ErrMissing) {
					e.Msg = fmt.Sprintf("required: the project's name, e.g. name = %q (bm2 serve registers it as %s/<name>.toml)",
						suggestName(absDir), c.Layout.ConfigDir)
				}
			}
		}
		return nil, err
	}
	p.File = filepath.Join(c.Layout.ConfigDir, p.Name+".toml")
	return p, nil
}

// policy is trust's policy with this host's accounts and systemd: a
// unit's state is asked of systemd, connected on first use.
func (c *Client) policy(ctx context.Context) (trust.Policy, func()) {
	var sd Systemd
	var cerr error
	connected := false
	pol := trust.Policy{Accounts: c.Accounts, UnitState: func(u string) (string, error) {
		if !connected {
			// The connection lives as long as the context it was made
			// with: the command's.
			connected = true
			sd, cerr = c.Connect(ctx)
		}
		if cerr != nil {
			return "", fmt.Errorf("systemd is not reachable: %w", cerr)
		}
		st, err := sd.Units(ctx, []string{u})
		if err != nil {
			return "", err
		}
		if st[0].LoadState == "not-found" {
			return "", nil
		}
		return st[0].UnitFileState, nil
	}}
	return pol, func() {
		if sd != nil {
			sd.Close()
		}
	}
}

// Verdict applies the policy (package trust) to a project whose file
// speaks for o.UID; trusted is --trust-file, the operator's word. In user
// scope every project runs as the user, under their own manager: there
// is nothing to ask root for.
func (c *Client) Verdict(ctx context.Context, p *config.Project, o trust.Origin, trusted bool) trust.Verdict {
	if trusted || c.Scope().IsUser() || o.UID == 0 {
		return trust.Verdict{}
	}
	pol, done := c.policy(ctx)
	defer done()
	return pol.Check(p, o)
}

// Vouch is verdict for a command that acts on the project: a refusal is
// an error naming every key refused and its fix; what passes is made
// what root grants (wants and requires become ordering only, said on
// out).
func (c *Client) Vouch(ctx context.Context, p *config.Project, o trust.Origin, trusted bool) error {
	v := c.Verdict(ctx, p, o, trusted)
	if !v.OK() {
		return refusedErr(v.Refused)
	}
	if trusted || c.Scope().IsUser() || o.UID == 0 {
		return nil
	}
	if len(p.Wants)+len(p.Requires) > 0 {
		say(c.Report, "%s: wants and requires order %s after %s only: a file root did not write starts no unit",
			o.File, p.Name, strings.Join(v.After, ", "))
	}
	trust.Apply(p, v)
	return nil
}

// refusedErr is the error of a file that asked for more than its
// speaker may have.
func refusedErr(rs trust.Refusals) error {
	noun := "thing"
	if len(rs) > 1 {
		noun = "things"
	}
	return fail(Invalid, "change the file as said, or, as root having read it, run the command again with --trust-file",
		fmt.Errorf("refused %d %s that a file root did not write asks root for (a file speaks only for its owner):\n  %s",
			len(rs), noun, strings.ReplaceAll(rs.Error(), "\n", "\n  ")))
}

// runsAs names the account and group the project's instances run as.
func (c *Client) runsAs(p *config.Project) string {
	if c.Scope().IsUser() {
		who := c.Scope().Layout().UID
		if u, err := c.Accounts.UserID(who); err == nil {
			if g, err := c.Accounts.GroupID(u.GID); err == nil {
				return u.Name + ":" + g.Name
			}
			return u.Name
		}
		return fmt.Sprintf("uid %d", who)
	}
	return trust.RunsAs(p, c.Accounts)
}

// Summary is a project's summary line with who it runs as:
// `project "api", 4 x cluster on port 3000, runtime bun, as alice:alice`.
func (c *Client) Summary(p *config.Project) string {
	return p.Summary() + ", as " + c.runsAs(p)
}

// CheckOwner is "one owner per name" (registry.CheckOwner): a name
// registered from another source is not taken over without --replace.
func (c *Client) CheckOwner(p *config.Project, entries []entry, replace bool) error {
	return refused(registry.CheckOwner(p, entries, replace))
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
	return fail(NoProject, fmt.Sprintf("`bm2 reload %s` starts and retires it; `bm2 logs %s` shows its output", name, arg),
		fmt.Errorf("%s is the surge instance of %s's reloads, not an instance to manage by itself", arg, name))
}
