package hooks

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/envfile"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/units"
)

// ExitRefused is the exit status of an instance bm2 refused to start
// (EX_CONFIG): its runtime is missing or below its floor, or its env_file
// cannot be used. bm2@.service lists it in RestartPreventExitStatus=.
const ExitRefused = 78

// RunEnv is what Run needs from the process; tests replace it.
type RunEnv struct {
	Getenv  func(string) string
	Stderr  io.Writer
	Dirs    []string                                     // jsruntime.SearchPath()
	Version jsruntime.Asker                              // jsruntime.AskVersion
	Exec    func(argv0 string, argv, env []string) error // syscall.Exec
	Environ func() []string
	Getwd   func() (string, error)
	UID     int
	// Replaceable tells who besides root can replace a binary
	// (jsruntime.Replaceable); nil means nobody (tests).
	Replaceable func(path string) (who string, ok bool)
}

// RootRefusal is why a runtime is not run as root: someone else can
// replace it. It wraps fs.ErrPermission, so jsruntime.Check takes it for
// a runtime the app's user (root) cannot run: runtime_missing.
func RootRefusal(who string) error {
	return fmt.Errorf("it can be replaced by %s, and bm2 runs no such binary as root (make it root's alone, or run the app as another user): %w", who, fs.ErrPermission)
}

// RefusedError is an instance refused before the app starts.
type RefusedError struct {
	Msg string
}

func (e *RefusedError) Error() string { return e.Msg }

// RunArgs is the command line of `bm2-probe run`, as the generator writes
// it into ExecStart=:
//
//	bm2-probe run <bun|node> [--env-file PATH] -- RUNTIME [ARG...]
type RunArgs struct {
	Kind    config.Runtime
	EnvFile string
	Argv    []string // the runtime and its arguments
}

// ParseRunArgs reads the arguments after "run".
func ParseRunArgs(args []string) (RunArgs, error) {
	var r RunArgs
	usage := fmt.Errorf("usage: bm2-probe run bun|node [--env-file PATH] -- RUNTIME [ARG...]")
	if len(args) < 3 {
		return r, usage
	}
	r.Kind = config.Runtime(args[0])
	if _, ok := jsruntime.Floor(r.Kind); !ok {
		return r, fmt.Errorf("unknown runtime %q", args[0])
	}
	rest := args[1:]
	if len(rest) >= 2 && rest[0] == "--env-file" {
		r.EnvFile, rest = rest[1], rest[2:]
	}
	if len(rest) < 2 || rest[0] != "--" {
		return r, usage
	}
	r.Argv = rest[1:]
	return r, nil
}

// Run is `bm2-probe run …`, the instance's ExecStart=, running as the
// app's user. It reads env_file (as that user, see envfile.Read), checks
// the runtime against its floor, then executes it in place of itself with
// the unit's environment, env_file's variables over [env] (as systemd's
// EnvironmentFile= would) and bm2's BM2_* over both. It returns only on
// failure; a *RefusedError means exit with ExitRefused. It emits no event:
// the app's user cannot speak for bm2, and the exit hook, as root, records
// what went wrong.
func Run(ctx context.Context, args []string, env RunEnv) error {
	ra, err := ParseRunArgs(args)
	if err != nil {
		return err
	}
	refuse := func(msg string) error {
		fmt.Fprintf(env.Stderr, "bm2: %s\n", msg)
		return &RefusedError{Msg: msg}
	}
	if m, inst, ok := instanceMark(env.Getenv("RUNTIME_DIRECTORY")); ok {
		return refuse(fmt.Sprintf("%s is marked errored (%s: %s); instance not started (`bm2 start %s` clears the mark)", inst, m.Reason, m.Detail, inst))
	}
	environ := env.Environ()
	if ra.EnvFile != "" {
		cwd, _ := env.Getwd()
		vars, err := envfile.Read(ra.EnvFile, cwd, env.UID)
		if err != nil {
			return refuse(fmt.Sprintf("env_file %v; instance not started", err))
		}
		environ = merge(environ, vars, env.Stderr)
	}
	cache := versionCache{dir: env.Getenv("RUNTIME_DIRECTORY")}
	ask := func(ctx context.Context, path string) (string, error) {
		if env.UID == 0 && env.Replaceable != nil {
			// The app runs as root: nothing another user can replace is
			// run, not even for its version.
			if who, ok := env.Replaceable(path); ok {
				return "", RootRefusal(who)
			}
		}
		cache.exe = path
		if v, ok := cache.load(); ok {
			return v, nil
		}
		v, err := env.Version(ctx, path)
		if err == nil {
			cache.pending = v
		}
		return v, err
	}
	rc := jsruntime.Check(ctx, ra.Kind, ra.Argv[0], env.Dirs, ask)
	switch {
	case rc.Retry:
		// Exists but did not answer: a plain failure, which systemd retries
		// within the restart budget; only a missing runtime or one below
		// its floor is refused for good.
		return fmt.Errorf("runtime %s; instance not started (systemd retries it)", rc.Problem)
	case !rc.OK():
		return refuse(fmt.Sprintf("runtime %s; instance not started (%s)", rc.Problem, jsruntime.Advice(ra.Kind)))
	}
	cache.store()
	return env.Exec(rc.Path, ra.Argv, environ)
}

// merge puts env_file's variables over the unit's environment, leaving
// bm2's own BM2_* alone (a warning names any env_file tried to set).
func merge(environ []string, vars []envfile.Var, warn io.Writer) []string {
	index := map[string]int{}
	for i, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		index[k] = i
	}
	for _, v := range vars {
		if strings.HasPrefix(v.Name, "BM2_") {
			fmt.Fprintf(warn, "bm2: env_file sets %s, which is bm2's own: ignored\n", v.Name)
			continue
		}
		kv := v.Name + "=" + v.Value
		if i, ok := index[v.Name]; ok {
			environ[i] = kv
		} else {
			index[v.Name] = len(environ)
			environ = append(environ, kv)
		}
	}
	return environ
}

// DefaultRunEnv is the real process.
func DefaultRunEnv() RunEnv {
	return RunEnv{
		Getenv:      os.Getenv,
		Stderr:      os.Stderr,
		Dirs:        jsruntime.SearchPath(),
		Version:     jsruntime.AskVersion,
		Exec:        syscall.Exec,
		Environ:     os.Environ,
		Getwd:       os.Getwd,
		UID:         os.Getuid(),
		Replaceable: jsruntime.Replaceable,
	}
}

// versionCache remembers the runtime's version across restarts of one
// instance, in the instance's own RuntimeDirectory= (kept over restarts,
// removed at stop, the app user's), so a crash-looping instance does not
// pay for `<runtime> --version` on every start. The key is the binary's
// identity: path, device, inode, size and modification time. It is the
// app's to write, so it decides nothing but the app's own start.
type versionCache struct {
	dir, exe string
	pending  string
}

func (c *versionCache) key() string {
	var st syscall.Stat_t
	if c.dir == "" || c.exe == "" || syscall.Stat(c.exe, &st) != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d %d %d.%d", c.exe, st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
}

func (c *versionCache) load() (string, bool) {
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

func (c *versionCache) store() {
	if c.pending == "" {
		return
	}
	if key := c.key(); key != "" {
		_ = safefs.Write(filepath.Join(c.dir, "runtime-version"), []byte(key+"\n"+strings.TrimSpace(c.pending)+"\n"), 0o600)
	}
}

// instanceMark reads the errored mark of the instance whose runtime
// directory is rd (/run/bm2/<instance>, or $XDG_RUNTIME_DIR/bm2/<instance>
// in user scope): the marks live beside it, in errored/ (package state).
// A mark set by this start's root fence step (port_fence_failed) must
// keep the app from running unfenced; the app's user can read the marks
// but not write them.
func instanceMark(rd string) (state.Mark, string, bool) {
	if rd == "" {
		return state.Mark{}, "", false
	}
	rd = filepath.Clean(rd)
	inst := filepath.Base(rd)
	if _, _, ok := units.ParseInstance(inst); !ok {
		return state.Mark{}, "", false
	}
	m, ok, err := state.Dir{Path: filepath.Dir(rd), Run: filepath.Dir(rd)}.InstanceErrored(inst)
	if err != nil && !ok {
		return state.Mark{}, "", false
	}
	return m, inst, ok
}
