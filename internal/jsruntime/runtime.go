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
	"syscall"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/safefs"
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

// Asker runs `<path> --version` and returns what it printed.
type Asker func(ctx context.Context, path string) (string, error)

// AskVersion runs `path --version` as the calling process and returns its
// standard output.
func AskVersion(ctx context.Context, path string) (string, error) {
	return askVersion(ctx, path, nil)
}

// AsUser returns an Asker that runs the runtime as uid/gid (no
// supplementary groups), never as the caller: a runtime the app's user
// can replace (Bun's default ~/.bun/bin/bun) is that user's program, and
// root must not run it as root. Only root can use it.
func AsUser(uid, gid int) Asker {
	return func(ctx context.Context, path string) (string, error) {
		return askVersion(ctx, path, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}})
	}
}

func askVersion(ctx context.Context, path string, cred *syscall.Credential) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, VersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.WaitDelay = time.Second
	// A minimal environment: what systemd gives a service, more or less.
	cmd.Env = []string{"PATH=" + strings.Join(SearchPath(), ":"), "HOME=/", "NO_COLOR=1"}
	cmd.Dir = "/"
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setsid: true}
	}
	// The first 4 KiB of each: a version is short, and a runtime is not
	// trusted to be.
	out, stderr := safefs.Capped{Max: 4096}, safefs.Capped{Max: 4096}
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("no answer within %s", VersionTimeout)
	}
	if err != nil {
		if msg := strings.TrimSpace(firstLine(stderr.String())); msg != "" {
			return "", fmt.Errorf("%w: %s", err, msg)
		}
		return "", err
	}
	return out.String(), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Result is what Check found out about a runtime.
type Result struct {
	Kind    config.Runtime
	Path    string // absolute path of the binary, "" when not found
	Version string // the first line it printed for --version, e.g. "v24.1.0"
	Floor   Version
	Reason  reason.Reason // reason.RuntimeMissing or reason.RuntimeBelowFloor; "" when usable
	Problem string        // for a person, after "runtime ": "/usr/bin/node is Node.js v20.1.0, below the floor 24.0.0"; "" when usable
	// Retry: the runtime exists but did not answer; not a reason to
	// refuse it for good.
	Retry bool
	// Unchecked says why its version was not asked (the Asker's
	// NotRunError: root runs no binary another user can replace); the
	// run wrapper checks it at each start, as the app's user. The
	// runtime counts as usable.
	Unchecked string
}

// OK tells whether the runtime can run the app.
func (r Result) OK() bool { return r.Problem == "" }

// Check finds the runtime command would start (an absolute path, or a bare
// name along dirs as systemd resolves it), asks its version with ask and
// compares it with the runtime's floor. Every runtime check of bm2 is
// this one: bm2 check and serve, the run wrapper at each start, and the
// exit hook that confirms a refusal.
func Check(ctx context.Context, kind config.Runtime, command string, dirs []string, ask Asker) Result {
	floor, _ := Floor(kind)
	r := Result{Kind: kind, Floor: floor}
	name := DisplayName(kind)
	path, err := resolve(command, dirs)
	if err != nil {
		r.Reason = reason.RuntimeMissing
		r.Problem = fmt.Sprintf("%s %v", command, err)
		return r
	}
	r.Path = path
	out, err := ask(ctx, path)
	var nr *NotRunError
	if errors.As(err, &nr) {
		r.Unchecked = nr.Why
		return r
	}
	if errors.Is(err, fs.ErrPermission) {
		// Permission bits do not change by waiting: not executable by
		// whoever asked (the app's user), so missing for it.
		r.Reason = reason.RuntimeMissing
		r.Problem = fmt.Sprintf("%s cannot be run by the app's user (%v)", path, err)
		return r
	}
	if err != nil {
		// It exists but did not answer: perhaps only a slow moment (a busy
		// host paging in a 100 MB binary).
		r.Retry = true
		r.Problem = fmt.Sprintf("%s --version failed: %v", path, err)
		return r
	}
	r.Version = strings.TrimSpace(firstLine(strings.TrimSpace(out)))
	v, err := ParseVersion(r.Version)
	if err != nil {
		r.Reason = reason.RuntimeMissing
		r.Problem = fmt.Sprintf("%s --version printed %q, which is not a %s version", path, r.Version, name)
		return r
	}
	if v.Compare(floor) < 0 {
		r.Reason = reason.RuntimeBelowFloor
		r.Problem = fmt.Sprintf("%s is %s %s, below the floor %s", path, name, r.Version, floor)
	}
	return r
}

// Advice says how to get a usable runtime.
func Advice(kind config.Runtime) string {
	floor, _ := Floor(kind)
	return fmt.Sprintf("install %s %s or newer where systemd finds it (%s), or set runtime_path to one",
		DisplayName(kind), floor, strings.Join(SearchPath(), ":"))
}

// DisplayName is the runtime's name for a person.
func DisplayName(r config.Runtime) string {
	if r == config.Node {
		return "Node.js"
	}
	return "Bun"
}

// resolve finds a command as systemd does for ExecStart=: an absolute path
// as is, a bare name along the fixed search path.
func resolve(command string, dirs []string) (string, error) {
	if filepath.IsAbs(command) {
		if err := Executable(command); err != nil {
			return "", err
		}
		return command, nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, command)
		if Executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found in %s", strings.Join(dirs, ":"))
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
