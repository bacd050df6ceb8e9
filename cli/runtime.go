package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/jsruntime"
)

// runtimeCheck is what bm2 found out about a project's runtime.
type runtimeCheck struct {
	Path    string // absolute path of the binary, "" when not found
	Version string // as the runtime printed it, e.g. "v24.1.0"
	Floor   jsruntime.Version
	Problem string // "" when the runtime is usable
}

// Line is the `runtime:` line of bm2 check.
func (rc runtimeCheck) Line() string {
	if rc.Problem != "" {
		return "runtime: " + rc.Problem
	}
	return fmt.Sprintf("runtime: %s %s (>= %s)", rc.Path, rc.Version, rc.Floor)
}

// checkRuntime finds p's runtime, asks its version and compares it with
// the floor.
func (a *App) checkRuntime(ctx context.Context, p *config.Project) runtimeCheck {
	floor, _ := jsruntime.Floor(p.Runtime)
	rc := runtimeCheck{Floor: floor}
	path, err := jsruntime.Find(p, a.RuntimeDirs)
	if err != nil {
		rc.Problem = err.Error()
		return rc
	}
	rc.Path = path
	out, err := a.RuntimeVersion(ctx, path)
	if err != nil {
		rc.Problem = fmt.Sprintf("%s --version failed: %v", path, err)
		return rc
	}
	rc.Version = strings.TrimSpace(out)
	if line, _, ok := strings.Cut(rc.Version, "\n"); ok {
		rc.Version = strings.TrimSpace(line)
	}
	v, err := jsruntime.ParseVersion(rc.Version)
	if err != nil {
		rc.Problem = fmt.Sprintf("%s --version printed %q, which is not a version bm2 can read", path, rc.Version)
		return rc
	}
	if v.Compare(floor) < 0 {
		rc.Problem = fmt.Sprintf("%s %s is below the floor %s", path, rc.Version, floor)
	}
	return rc
}

// runtimeAdvice says how to get a usable runtime for p.
func runtimeAdvice(p *config.Project) string {
	floor, _ := jsruntime.Floor(p.Runtime)
	name := "Bun"
	if p.Runtime == config.Node {
		name = "Node.js"
	}
	return fmt.Sprintf("install %s %s or newer where systemd finds it (%s), or set runtime_path to one",
		name, floor, strings.Join(jsruntime.SearchPath(), ":"))
}
