package registry

import (
	"fmt"
	"path/filepath"

	"github.com/bm2dev/bm2/internal/config"
)

// Refusal is a change to the registry that the registered projects
// refuse: the project file is what must change, as Hint says (the bm2
// command exits with its "invalid" status).
type Refusal struct {
	Hint string
	Err  error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Blocked is a change to the registry that what is registered, or how,
// does not allow as things stand (the bm2 command fails): Hint says what
// would let it through.
type Blocked struct {
	Hint string
	Err  error
}

func (b *Blocked) Error() string { return b.Err.Error() }
func (b *Blocked) Unwrap() error { return b.Err }

// Others are the valid registered projects but the one named.
func Others(entries []config.Entry, except string) []*config.Project {
	var out []*config.Project
	for _, e := range entries {
		if e.Project != nil && e.Name != except {
			out = append(out, e.Project)
		}
	}
	return out
}

// sameSource tells whether p comes from where the registered project old
// came from: the same file (Source), or, for a project registered before
// bm2 recorded it, a file in its cwd.
func sameSource(old, p *config.Project) bool {
	if old.Source != "" {
		return filepath.Clean(old.Source) == filepath.Clean(p.Source)
	}
	return filepath.Dir(filepath.Clean(p.Source)) == filepath.Clean(old.Cwd)
}

// CheckOwner is "one owner per name": a name registered from another
// source (another cwd or file) is not taken over without --replace. A
// project served from its registered file itself keeps the source that
// file records. A refusal is a *Refusal.
func CheckOwner(p *config.Project, entries []config.Entry, replace bool) error {
	if replace || p.Source == "" {
		return nil
	}
	for _, e := range entries {
		if e.Name != p.Name {
			continue
		}
		if filepath.Clean(p.Source) == filepath.Clean(e.Path) {
			// The registered file itself, served again (root's, where
			// only root writes): it keeps the source it records.
			if e.Project != nil {
				p.Source = e.Project.Source
			}
			return nil
		}
		if e.Project != nil && sameSource(e.Project, p) {
			return nil
		}
		from := ""
		switch {
		case e.Project == nil:
			from = fmt.Sprintf("in %s, which bm2 cannot read (%v), so it cannot tell where from", e.Path, e.Err)
		case e.Project.Source != "":
			from = fmt.Sprintf("from %s (cwd %s) in %s", e.Project.Source, e.Project.Cwd, e.Path)
		default:
			from = fmt.Sprintf("from cwd %s in %s", e.Project.Cwd, e.Path)
		}
		return &Refusal{
			Hint: fmt.Sprintf("choose another name in %s; or, to move %s here (its account, state and private part go with the name), run bm2 serve --replace", p.Source, p.Name),
			Err:  fmt.Errorf("project %s is registered %s, not from %s: a name has one owner", p.Name, from, p.Source)}
	}
	return nil
}

// CheckConflict is config.CheckConflict of p against the registered
// projects (entries, but for p's own name), then against what reserved
// holds, the ports that are no project's (the scrape endpoints'): a
// conflict among the projects is found without asking reserved.
func CheckConflict(p *config.Project, entries []config.Entry, reserved func() []*config.Project) error {
	if err := config.CheckConflict(p, Others(entries, p.Name)); err != nil {
		return err
	}
	return config.CheckConflict(p, reserved())
}
