package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/bm2dev/bm2/generator"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/confine"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/hooks"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/units"
)

// runningIdentity asks systemd for the UID and GID of a running instance.
func runningIdentity(ctx context.Context, connect func(context.Context) (Systemd, error), p *config.Project) (identity.Identity, bool) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	sd, err := connect(ctx)
	if err != nil {
		return identity.Identity{}, false
	}
	defer sd.Close()
	// Only units systemd has loaded: asking about one it has not would
	// load the bare template (and log that it has no ExecStart=).
	loaded, err := sd.Loaded(ctx, []string{units.InstancePattern(p.Name)})
	if err != nil {
		return identity.Identity{}, false
	}
	for _, l := range loaded {
		if name, _, ok := units.ParseInstance(l.Name); !ok || name != p.Name || l.ActiveState != "active" {
			continue
		}
		st, err := sd.Units(ctx, []string{l.Name})
		if err == nil && len(st) == 1 && st[0].UID != sysd.NoID && st[0].GID != sysd.NoID && st[0].MainPID != 0 {
			return identity.Identity{Name: p.Account(), UID: int(st[0].UID), GID: int(st[0].GID)}, true
		}
	}
	return identity.Identity{}, false
}

// CheckRuntime finds p's runtime (with e's lookups), asks its version (as the project's
// user, never as root) and compares it with the floor. Run by root, a
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
