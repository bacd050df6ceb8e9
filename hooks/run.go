package hooks

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/jsruntime"
)

// ExitRuntimeRejected is the exit status of a refused runtime (EX_CONFIG).
// bm2@.service lists it in RestartPreventExitStatus=.
const ExitRuntimeRejected = 78

// RunEnv is what Run needs from the process; tests replace it.
type RunEnv struct {
	Getenv  func(string) string
	Stderr  io.Writer
	Events  journal.Sink
	Dirs    []string                                               // jsruntime.SearchPath()
	Version func(ctx context.Context, path string) (string, error) // jsruntime.AskVersion
	Exec    func(argv0 string, argv, env []string) error           // syscall.Exec
	Environ func() []string
}

// RejectedError is a runtime refused before the app starts.
type RejectedError struct {
	Reason string // runtime_missing or runtime_below_floor
	Msg    string
}

func (e *RejectedError) Error() string { return e.Msg }

// Run is `bm2-probe run <bun|node> -- <runtime> [args…]`. It checks the
// runtime against its floor, then executes it in place of itself. It returns
// only on failure; a *RejectedError means exit with ExitRuntimeRejected.
func Run(ctx context.Context, args []string, env RunEnv) error {
	if len(args) < 3 || args[1] != "--" {
		return fmt.Errorf("usage: bm2-probe run bun|node -- RUNTIME [ARG...]")
	}
	kind := config.Runtime(args[0])
	floor, ok := jsruntime.Floor(kind)
	if !ok {
		return fmt.Errorf("unknown runtime %q", args[0])
	}
	argv := args[2:]
	project, instance := env.Getenv("BM2_APP_NAME"), env.Getenv("BM2_APP_NAME")+"-"+env.Getenv("BM2_APP_INSTANCE")
	reject := func(reason, msg string) error {
		fmt.Fprintf(env.Stderr, "bm2: %s\n", msg)
		if env.Events != nil {
			env.Events.Emit(journal.Event{
				Kind: journal.RuntimeRejected, Project: project, Instance: instance, Reason: reason,
				Message: fmt.Sprintf("%s: %s", instance, msg),
			})
		}
		return &RejectedError{Reason: reason, Msg: msg}
	}
	exe, err := resolve(argv[0], env.Dirs)
	if err != nil {
		return reject("runtime_missing", fmt.Sprintf("runtime %s %v; instance not started (install %s %s or newer, or set runtime_path)",
			argv[0], err, displayName(kind), floor))
	}
	cache := versionCache{dir: env.Getenv("RUNTIME_DIRECTORY"), exe: exe}
	out, cached := cache.load()
	if !cached {
		out, err = env.Version(ctx, exe)
		if err != nil {
			// It exists but did not answer: perhaps only a slow moment (a
			// busy host paging in a 100 MB binary). A plain failure, so
			// systemd retries it within the restart budget; only a missing
			// runtime or one below its floor is refused for good.
			return fmt.Errorf("runtime %s did not tell its version: %v; instance not started (systemd retries it)", exe, err)
		}
	}
	printed := strings.TrimSpace(out)
	if line, _, ok := strings.Cut(printed, "\n"); ok {
		printed = line
	}
	v, err := jsruntime.ParseVersion(printed)
	if err != nil {
		return reject("runtime_missing", fmt.Sprintf("runtime %s --version printed %q; instance not started", exe, printed))
	}
	if v.Compare(floor) < 0 {
		return reject("runtime_below_floor", fmt.Sprintf("runtime %s is %s %s, below the floor %s; instance not started (install %s %s or newer, or set runtime_path)",
			exe, displayName(kind), printed, floor, displayName(kind), floor))
	}
	if !cached {
		cache.store(printed)
	}
	return env.Exec(exe, argv, env.Environ())
}

func displayName(r config.Runtime) string {
	if r == config.Node {
		return "Node.js"
	}
	return "Bun"
}

// resolve finds a command as systemd does for ExecStart=: an absolute path
// as is, a bare name along the fixed search path.
func resolve(name string, dirs []string) (string, error) {
	if path.IsAbs(name) {
		if err := jsruntime.Executable(name); err != nil {
			return "", err
		}
		return name, nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if jsruntime.Executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("not found in %s", strings.Join(dirs, ":"))
}

// DefaultRunEnv is the real process.
func DefaultRunEnv() RunEnv {
	return RunEnv{
		Getenv:  os.Getenv,
		Stderr:  os.Stderr,
		Events:  journal.Journald{Fallback: os.Stderr},
		Dirs:    jsruntime.SearchPath(),
		Version: jsruntime.AskVersion,
		Exec:    syscall.Exec,
		Environ: os.Environ,
	}
}

// versionCache remembers the runtime's version across restarts of one
// instance, in the instance's own RuntimeDirectory= (kept over restarts,
// removed at stop, writable only by the app's user), so a crash-looping
// instance does not pay for `<runtime> --version` on every start. The key
// is the binary's identity: path, device, inode, size and modification time.
type versionCache struct{ dir, exe string }

func (c versionCache) key() string {
	var st syscall.Stat_t
	if c.dir == "" || syscall.Stat(c.exe, &st) != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d %d %d.%d", c.exe, st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
}

func (c versionCache) load() (string, bool) {
	key := c.key()
	if key == "" {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(c.dir, "runtime-version"))
	if err != nil {
		return "", false
	}
	k, v, ok := strings.Cut(string(data), "\n")
	if !ok || k != key {
		return "", false
	}
	return strings.TrimSpace(v), true
}

func (c versionCache) store(version string) {
	if key := c.key(); key != "" {
		tmp := filepath.Join(c.dir, ".runtime-version")
		if os.WriteFile(tmp, []byte(key+"\n"+version+"\n"), 0o600) == nil {
			os.Rename(tmp, filepath.Join(c.dir, "runtime-version"))
		}
	}
}
