package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/bm2dev/bm2/generator"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/confine"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/hooks"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/units"
)

// CheckRuntime finds p's runtime (with e's lookups), asks its version
// (as the project's user, never as root) and compares it with the floor. Run by root, a
// runtime that someone other than root can replace (the app's user, the
// app itself in compat mode) is asked only inside the project's sandbox,
// as its account, in a transient unit (package confine); and never when
// the project runs as root: it is refused then, as the run wrapper
// refuses it at start.
func CheckRuntime(ctx context.Context, e *Env, p *config.Project) jsruntime.Result {
	id, err := explain.Scope{Lookup: e.LookupUser}.ProjectIdentity(ctx, p, false)
	if err != nil {
		id = identity.Nobody
	}
	ask := func(ctx context.Context, path string) (string, error) {
		if identity.Self().UID != 0 || (e.Layout != nil && e.Layout.IsUser()) {
			return e.RuntimeVersion(ctx, id, path)
		}
		who, replaceable := e.Replaceable(path)
		switch {
		case !replaceable:
			return e.RuntimeVersion(ctx, id, path)
		case id.UID == 0:
			// The run wrapper refuses it at start too: a problem.
			return "", hooks.RootRefusal(who)
		}
		out, err := e.ConfinedVersion(ctx, p, path)
		if err != nil && !errors.Is(err, fs.ErrPermission) {
			return "", &jsruntime.NotRunError{Why: fmt.Sprintf("%s can be replaced by %s, so bm2 asks it only in %s's sandbox, which failed (%v); the run wrapper checks it at each start, as %s", path, who, p.Name, err, id.Name)}
		}
		return out, err
	}
	return jsruntime.Check(ctx, p.Runtime, p.RuntimeCommand(), e.RuntimeDirs, ask)
}

// confinedVersion runs `<path> --version` as p's instance 0 would run
// it: its account and sandbox (the template and the drop-in the
// generator would write), in a transient unit of the system manager.
func confinedVersion(ctx context.Context, p *config.Project, path string) (string, error) {
	tmpl, err := units.StaticFile("bm2@.service")
	if err != nil {
		return "", err
	}
	props, err := confine.Properties(tmpl, generator.InstanceDropIn(p, generator.Options{}, 0))
	if err != nil {
		return "", err
	}
	return confine.Run(ctx, props, confine.Options{Timeout: jsruntime.VersionTimeout}, path, "--version")
}
