package jsruntime

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

// Floor returns the oldest version of a runtime bm2 runs apps with, in
// both modes: Node.js gained listen({reusePort}) in 24.0.0, and Bun.serve's
// reusePort is what bm2 supports from Bun 1.4.0.
func Floor(r config.Runtime) (Version, bool) {
	switch r {
	case config.Bun:
		return Version{1, 4, 0, ""}, true
	case config.Node:
		return Version{24, 0, 0, ""}, true
	}
	return Version{}, false
}

// Version is a semantic version as runtimes print it.
type Version struct {
	Major, Minor, Patch int
	Pre                 string // pre-release, e.g. "canary.1"; sorts before the release
}

func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	return s
}

// ParseVersion reads what `node --version` ("v24.1.0") and `bun --version`
// ("1.4.4", "1.4.0-canary.12+abc") print: an optional "v", up to three
// numbers, an optional pre-release and build metadata (ignored).
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(s)
	if line, _, ok := strings.Cut(s, "\n"); ok {
		s = strings.TrimSpace(line)
	}
	raw := s
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	s, _, _ = strings.Cut(s, "+")
	var v Version
	s, v.Pre, _ = strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 3 || parts[0] == "" {
		return Version{}, fmt.Errorf("%q is not a version number", raw)
	}
	nums := []*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || strings.TrimLeft(p, "0123456789") != "" {
			return Version{}, fmt.Errorf("%q is not a version number", raw)
		}
		*nums[i] = n
	}
	return v, nil
}

// Compare returns -1, 0 or 1 as v is older than, equal to or newer than w.
// A pre-release is older than its release; two pre-releases compare as
// strings (enough to order the floors bm2 knows).
func (v Version) Compare(w Version) int {
	for _, d := range [][2]int{{v.Major, w.Major}, {v.Minor, w.Minor}, {v.Patch, w.Patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case v.Pre == w.Pre:
		return 0
	case v.Pre == "":
		return 1
	case w.Pre == "":
		return -1
	case v.Pre < w.Pre:
		return -1
	}
	return 1
}

// SearchPath is where systemd looks for a bare command name in ExecStart=,
// in order (it does not use $PATH).
func SearchPath() []string {
	return []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin"}
}

// VersionTimeout bounds `<runtime> --version`.
const VersionTimeout = 5 * time.Second

// AskVersion runs `path --version` and returns its standard output.
func AskVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, VersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.WaitDelay = time.Second
	// A minimal environment: what systemd gives a service, more or less.
	cmd.Env = []string{"PATH=" + strings.Join(SearchPath(), ":"), "HOME=/", "NO_COLOR=1"}
	out, err := cmd.Output()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("no answer within %s", VersionTimeout)
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

// Find resolves the binary systemd would start for p: runtime_path, or the
// first directory of dirs (normally SearchPath) holding an executable named
// after the runtime.
func Find(p *config.Project, dirs []string) (string, error) {
	if p.RuntimePath != "" {
		if err := Executable(p.RuntimePath); err != nil {
			return "", fmt.Errorf("%s (runtime_path) %w", p.RuntimePath, err)
		}
		return p.RuntimePath, nil
	}
	name := string(p.Runtime)
	for _, d := range dirs {
		cand := filepath.Join(d, name)
		if Executable(cand) == nil {
			return cand, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, strings.Join(dirs, ":"))
}

// Executable returns nil when path is an executable regular file (after
// symlinks), or an error that reads well after the path.
func Executable(path string) error {
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
