package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/config"
)

// floorOf returns the oldest version of a runtime bm2 runs apps with, in
// both modes: Node.js gained listen({reusePort}) in 24.0.0, and Bun.serve's
// reusePort is what bm2 supports from Bun 1.4.0.
func floorOf(r config.Runtime) (version, bool) {
	switch r {
	case config.Bun:
		return version{1, 4, 0, ""}, true
	case config.Node:
		return version{24, 0, 0, ""}, true
	}
	return version{}, false
}

// version is a semantic version as runtimes print it.
type version struct {
	major, minor, patch int
	pre                 string // pre-release, e.g. "canary.1"; sorts before the release
}

func (v version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch)
	if v.pre != "" {
		s += "-" + v.pre
	}
	return s
}

// parseVersion reads what `node --version` ("v24.1.0") and `bun --version`
// ("1.4.4", "1.4.0-canary.12+abc") print: an optional "v", up to three
// numbers, an optional pre-release and build metadata (ignored).
func parseVersion(s string) (version, error) {
	s = strings.TrimSpace(s)
	if line, _, ok := strings.Cut(s, "\n"); ok {
		s = strings.TrimSpace(line)
	}
	raw := s
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	s, _, _ = strings.Cut(s, "+")
	var v version
	s, v.pre, _ = strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 3 || parts[0] == "" {
		return version{}, fmt.Errorf("%q is not a version number", raw)
	}
	nums := []*int{&v.major, &v.minor, &v.patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || strings.TrimLeft(p, "0123456789") != "" {
			return version{}, fmt.Errorf("%q is not a version number", raw)
		}
		*nums[i] = n
	}
	return v, nil
}

// compare returns -1, 0 or 1 as v is older than, equal to or newer than w.
// A pre-release is older than its release; two pre-releases compare as
// strings (enough to order the floors bm2 knows).
func (v version) compare(w version) int {
	for _, d := range [][2]int{{v.major, w.major}, {v.minor, w.minor}, {v.patch, w.patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case v.pre == w.pre:
		return 0
	case v.pre == "":
		return 1
	case w.pre == "":
		return -1
	case v.pre < w.pre:
		return -1
	}
	return 1
}

// runtimeCheck is what bm2 found out about a project's runtime.
type runtimeCheck struct {
	Path    string // absolute path of the binary, "" when not found
	Version string // as the runtime printed it, e.g. "v24.1.0"
	Floor   version
	Problem string // "" when the runtime is usable
}

// Line is the `runtime:` line of bm2 check.
func (rc runtimeCheck) Line() string {
	if rc.Problem != "" {
		return "runtime: " + rc.Problem
	}
	return fmt.Sprintf("runtime: %s %s (>= %s)", rc.Path, rc.Version, rc.Floor)
}

// findRuntime resolves the binary systemd would start for p: runtime_path,
// or the first directory of dirs holding an executable named after the
// runtime.
func findRuntime(p *config.Project, dirs []string) (string, error) {
	if p.RuntimePath != "" {
		if err := executable(p.RuntimePath); err != nil {
			return "", fmt.Errorf("%s (runtime_path) %w", p.RuntimePath, err)
		}
		return p.RuntimePath, nil
	}
	name := string(p.Runtime)
	for _, d := range dirs {
		cand := filepath.Join(d, name)
		if executable(cand) == nil {
			return cand, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, strings.Join(dirs, ":"))
}

// executable returns nil when path is an executable regular file (after
// symlinks), or an error that reads well after the path.
func executable(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return fmt.Errorf("cannot be read: %w", err)
	case !st.Mode().IsRegular():
		return errors.New("is not a regular file")
	case st.Mode().Perm()&0o111 == 0:
		return errors.New("is not executable")
	}
	return nil
}

// checkRuntime finds p's runtime, asks its version and compares it with
// the floor.
func (a *App) checkRuntime(ctx context.Context, p *config.Project) runtimeCheck {
	floor, _ := floorOf(p.Runtime)
	rc := runtimeCheck{Floor: floor}
	path, err := findRuntime(p, a.RuntimeDirs)
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
	v, err := parseVersion(rc.Version)
	if err != nil {
		rc.Problem = fmt.Sprintf("%s --version printed %q, which is not a version bm2 can read", path, rc.Version)
		return rc
	}
	if v.compare(floor) < 0 {
		rc.Problem = fmt.Sprintf("%s %s is below the floor %s", path, rc.Version, floor)
	}
	return rc
}

// runtimeVersionTimeout bounds `<runtime> --version`.
const runtimeVersionTimeout = 5 * time.Second

// runtimeVersion runs `path --version` and returns its standard output.
func runtimeVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, runtimeVersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.WaitDelay = time.Second
	// A minimal environment: what systemd gives a service, more or less.
	cmd.Env = []string{"PATH=" + strings.Join(SystemdSearchPath(), ":"), "HOME=/", "NO_COLOR=1"}
	out, err := cmd.Output()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("no answer within %s", runtimeVersionTimeout)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(firstLine(string(ee.Stderr))))
		}
		return "", err
	}
	return string(out), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// runtimeAdvice says how to get a usable runtime for p.
func runtimeAdvice(p *config.Project) string {
	floor, _ := floorOf(p.Runtime)
	name := "Bun"
	if p.Runtime == config.Node {
		name = "Node.js"
	}
	return fmt.Sprintf("install %s %s or newer where systemd finds it (%s), or set runtime_path to one",
		name, floor, strings.Join(SystemdSearchPath(), ":"))
}
