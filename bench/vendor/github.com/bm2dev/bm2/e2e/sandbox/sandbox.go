package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

//go:embed boot-inner.sh
var bootInner string

// bootScript is the file name of bootInner in the staging directory.
const bootScript = "boot-inner.sh"

// IDPrefix starts the id of every sandbox: its cgroup directories, its
// staging directory and, by default, its hostname are named after the id.
const IDPrefix = "bm2-e2e-"

// DefaultBootTimeout bounds Boot when its context has no deadline.
const DefaultBootTimeout = 2 * time.Minute

// Options configure a sandbox.
type Options struct {
	// Repo is a host directory, normally the repository under test,
	// bind-mounted read-write at the same path inside. Optional.
	Repo string
	// Binds are more host directories bind-mounted at the same path
	// inside, read-write, or read-only when suffixed with ":ro" (for
	// example a runtime cache: "/var/cache/bm2-test/runtimes:ro").
	Binds []string
	// Name is the sandbox's hostname. Optional; it defaults to the id.
	Name string
	// Legacy boots systemd in legacy cgroup mode (cgroup v1 only, no
	// unified hierarchy inside), as on a cgroup v1 host without it. By
	// default a host with v1 hierarchies gets hybrid mode: the cgroup v2
	// hierarchy at /sys/fs/cgroup/unified inside, where systemd keeps a
	// cgroup v2 directory per unit (what cgroup BPF programs attach to).
	Legacy bool
	// Root is another root file system to boot instead of the host's (a
	// Debian release unpacked by debootstrap, its systemd another
	// version): the overlay's lower layer. Optional; the host's / by
	// default. Such a root boots with the cgroup v2 hierarchy alone
	// (systemd 256 and later refuse v1), so the controllers the host's
	// v1 hierarchies hold are missing inside. Not with Legacy.
	Root string
}

// Machine is a booted sandbox: a systemd running as PID 1 in its own
// namespaces and cgroups. Its methods are safe for concurrent use.
type Machine struct {
	id, name string
	state    string // is-system-running at boot: running or degraded
	pid      int    // host pid of the sandbox's PID 1
	init     *os.Process
	nsMu     sync.RWMutex // guards ns: held for reading while starting commands
	ns       []*os.File   // its namespaces, in the order of nsTypes; nil once closed
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has been waited for
	waitErr  error         // cmd.Wait's result, set before exited is closed
	console  *tailBuffer
	cgroups  []string // the sandbox's cgroup dirs, one per hierarchy
	procs    []string // their cgroup.procs files
	staging  string   // host dir the inner script mounts its tmpfs on
	env      []string

	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var seq atomic.Int64

// Boot starts a sandbox and waits until its systemd has finished booting
// (systemctl is-system-running says running or degraded). If ctx has no
// deadline, DefaultBootTimeout applies. Boot needs root; see RequireRoot.
// The caller must Close the Machine.
func Boot(ctx context.Context, opts Options) (*Machine, error) {
	return boot(ctx, opts)
}

func boot(ctx context.Context, opts Options) (_ *Machine, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultBootTimeout)
		defer cancel()
	}
	if err := checkHost(); err != nil {
		return nil, err
	}
	start, err := selfStartTime()
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("%s%d-%d-%d", IDPrefix, os.Getpid(), start, seq.Add(1))
	m := &Machine{
		id:      id,
		name:    opts.Name,
		exited:  make(chan struct{}),
		console: &tailBuffer{max: 64 << 10},
		env:     execEnv(),
	}
	if m.name == "" {
		m.name = id
	}
	binds, err := bindArgs(opts)
	if err == nil {
		err = checkRoot(opts)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", id, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("sandbox %s: %w", id, err), m.Close())
			if c := m.Console(); c != "" {
				err = fmt.Errorf("%w\nconsole output:\n%s", err, c)
			}
		}
	}()

	if err := ensureUnified(); err != nil {
		return nil, err
	}
	hs, err := cgroupHierarchies()
	if err != nil {
		return nil, err
	}
	if m.cgroups, err = createCgroups(hs, id); err != nil {
		return nil, err
	}
	for _, d := range m.cgroups {
		m.procs = append(m.procs, filepath.Join(d, "cgroup.procs"))
	}
	if m.staging, err = os.MkdirTemp("", id+"-"); err != nil {
		return nil, fmt.Errorf("create staging dir: %w", err)
	}
	// bash opens the script before the boot mounts a tmpfs over the
	// staging dir, and keeps reading it through its file descriptor.
	script := filepath.Join(m.staging, bootScript)
	if err := os.WriteFile(script, []byte(bootInner), 0o700); err != nil {
		return nil, fmt.Errorf("write boot script: %w", err)
	}

	args := []string{
		"unshare", "--pid", "--mount", "--cgroup", "--uts", "--ipc", "--net", "--fork", "--kill-child",
		"bash", script, m.staging, m.name, id,
	}
	args = append(args, binds...)
	m.cmd = exec.Command("/bin/sh", m.joinArgs(args)...)
	m.cmd.Stdin = nil
	m.cmd.Stdout = m.console
	m.cmd.Stderr = m.console
	mode, lower := "hybrid", "/"
	if opts.Root != "" {
		mode, lower = "unified", opts.Root
	} else if opts.Legacy {
		mode = "legacy"
	}
	m.cmd.Env = []string{"PATH=" + sandboxPath, "BM2_E2E_CGROUP=" + mode, "BM2_E2E_LOWER=" + lower}
	// If this process dies, unshare gets SIGKILL, and --kill-child passes
	// it on to the sandbox's PID 1, which takes the whole PID namespace
	// down with it.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	m.cmd.WaitDelay = time.Second
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start unshare: %w", err)
	}
	go func() {
		m.waitErr = m.cmd.Wait()
		close(m.exited)
	}()

	if err := m.findInit(ctx); err != nil {
		return nil, err
	}
	if err := m.waitRunning(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// ID returns the sandbox's unique id, bm2-e2e-<pid>-<start time>-<n>.
func (m *Machine) ID() string { return m.id }

// PID returns the host pid of the sandbox's PID 1, its systemd.
func (m *Machine) PID() int { return m.pid }

// State returns what systemctl is-system-running said when the boot
// completed: "running", or "degraded" if some unit failed.
func (m *Machine) State() string { return m.state }

// Console returns the last 64 KiB written by the boot script and by systemd
// to its console, for diagnostics.
func (m *Machine) Console() string { return m.console.String() }

// ExecError is returned by Exec, Sh and WriteFile when a command fails.
type ExecError struct {
	Args     []string // the command, as run inside the sandbox
	ExitCode int      // -1 if it did not exit normally
	Output   string   // its stderr (its combined output, for Sh)
	Err      error    // the underlying error, e.g. an *exec.ExitError
}

func (e *ExecError) Error() string {
	out := strings.TrimSpace(e.Output)
	if len(out) > 4096 {
		out = "..." + out[len(out)-4096:]
	}
	if out == "" {
		return fmt.Sprintf("sandbox exec %q: %v", e.Args, e.Err)
	}
	return fmt.Sprintf("sandbox exec %q: %v: %s", e.Args, e.Err, out)
}

func (e *ExecError) Unwrap() error { return e.Err }

// ErrClosed is returned when a closed Machine is used.
var ErrClosed = errors.New("sandbox is closed")

// Exec runs a command inside the sandbox, in all of its namespaces and in
// its root cgroup, and returns its stdout and stderr. args[0] is looked up
// in the sandbox's PATH. The command gets a fixed environment (see the
// package doc), not the caller's. A non-zero exit is an *ExecError
// carrying the exit code and stderr.
//
// When ctx is done, the command's process is killed; processes it started in
// the background are not. Background processes that keep stdout or stderr
// open do not hold Exec up for more than a second after the command exits.
func (m *Machine) Exec(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	err = m.run(ctx, nil, &o, &e, args)
	var ee *ExecError
	if errors.As(err, &ee) {
		ee.Output = e.String()
	}
	return o.String(), e.String(), err
}

// Sh runs script with bash -c inside the sandbox, like Exec, and returns its
// combined stdout and stderr.
func (m *Machine) Sh(ctx context.Context, script string) (string, error) {
	// With the same *bytes.Buffer for both, exec.Cmd serializes the writes.
	var out bytes.Buffer
	err := m.run(ctx, nil, &out, &out, []string{"bash", "-c", script})
	var ee *ExecError
	if errors.As(err, &ee) {
		ee.Output = out.String()
	}
	return out.String(), err
}

// writeFileTimeout bounds WriteFile.
const writeFileTimeout = time.Minute

// WriteFile writes data to path inside the sandbox, creating its parent
// directories, and sets its permissions to mode. The file is replaced
// atomically. Symbolic links are resolved inside the sandbox.
func (m *Machine) WriteFile(path string, data []byte, mode os.FileMode) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("sandbox write %s: path is not absolute", path)
	}
	const script = `set -e
umask 077
mkdir -p -- "$(dirname -- "$1")"
tmp=$(mktemp -- "$1.XXXXXX")
trap 'rm -f -- "$tmp"' EXIT
cat >"$tmp"
chmod "$2" -- "$tmp"
mv -f -- "$tmp" "$1"
trap - EXIT`
	args := []string{"sh", "-c", script, "sh", path, strconv.FormatUint(uint64(mode.Perm()), 8)}
	ctx, cancel := context.WithTimeout(context.Background(), writeFileTimeout)
	defer cancel()
	var stderr bytes.Buffer
	err := m.run(ctx, bytes.NewReader(data), io.Discard, &stderr, args)
	var ee *ExecError
	if errors.As(err, &ee) {
		ee.Output = stderr.String()
	}
	if err != nil {
		return fmt.Errorf("sandbox write %s: %w", path, err)
	}
	return nil
}

// run runs args inside the sandbox via nsenter.
func (m *Machine) run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		return errors.New("sandbox exec: no command")
	}
	if m.closing.Load() {
		return fmt.Errorf("sandbox %s exec %q: %w", m.id, args, ErrClosed)
	}
	if m.hasExited() {
		return fmt.Errorf("sandbox %s exec %q: the sandbox has died (%v)", m.id, args, m.waitErr)
	}
	// The command first joins the sandbox's cgroups (on the host side, as
	// cgroup namespaces forbid joining a cgroup outside one's own), then
	// nsenter moves it into the namespaces, then setpriv makes sure it
	// dies with nsenter when ctx kills that. The namespaces are passed as
	// the file descriptors opened at boot, not as a pid that might be
	// recycled once the sandbox is dead: entering a dead sandbox fails
	// instead of landing anywhere else.
	full := []string{"nsenter"}
	for i, t := range nsTypes {
		full = append(full, fmt.Sprintf("--%s=/proc/self/fd/%d", t.flag, 3+i))
	}
	full = append(full, "setpriv", "--pdeathsig", "KILL", "--")
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", m.joinArgs(full)...)
	cmd.Env = m.env
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	m.nsMu.RLock()
	if m.ns == nil {
		m.nsMu.RUnlock()
		return fmt.Errorf("sandbox %s exec %q: %w", m.id, args, ErrClosed)
	}
	cmd.ExtraFiles = m.ns
	err := cmd.Start()
	m.nsMu.RUnlock()
	if err == nil {
		err = cmd.Wait()
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// The command succeeded, but something it left running in the
		// background still holds its output open. That is fine.
		err = nil
	}
	if err == nil {
		return nil
	}
	code := -1
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		code = xe.ExitCode()
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
	}
	return &ExecError{Args: args, ExitCode: code, Err: err}
}

// joinArgs returns the arguments for /bin/sh that make a process join the
// sandbox's cgroups and then exec args.
func (m *Machine) joinArgs(args []string) []string {
	const join = `while [ "$1" != -- ]; do echo $$ >"$1" || exit 125; shift; done; shift; exec "$@"`
	a := append([]string{"-c", join, "sh"}, m.procs...)
	a = append(a, "--")
	return append(a, args...)
}

// findInit waits for unshare to fork the sandbox's PID 1 and records it.
func (m *Machine) findInit(ctx context.Context) error {
	upid := m.cmd.Process.Pid
	childrenFile := fmt.Sprintf("/proc/%d/task/%d/children", upid, upid)
	err := pollUntil(ctx, 5*time.Millisecond, func() (bool, error) {
		select {
		case <-m.exited:
			return false, fmt.Errorf("boot process exited early: %v", m.waitErr)
		default:
		}
		data, err := os.ReadFile(childrenFile)
		if err != nil {
			return false, nil // not there yet, or exited: the next round tells
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			return false, nil
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil {
			return false, fmt.Errorf("parse %s: %w", childrenFile, err)
		}
		// Pin the process with a pidfd, then check it still is unshare's
		// child, so that Close can never signal a recycled pid.
		p, err := os.FindProcess(pid)
		if err != nil {
			return false, fmt.Errorf("find sandbox init %d: %w", pid, err)
		}
		if ppid, err := parentPID(pid); err != nil || ppid != upid {
			p.Release()
			return false, nil
		}
		// unshare created all the namespaces before it forked, so they
		// are final already; hold on to them. Checking again that the
		// process is alive and unshare's afterwards proves that the
		// files are its namespaces.
		ns, err := openNamespaces(pid)
		if err == nil {
			if ppid, perr := parentPID(pid); perr != nil || ppid != upid || p.Signal(syscall.Signal(0)) != nil {
				err = fmt.Errorf("sandbox init %d exited during boot", pid)
			}
		}
		if err != nil {
			closeAll(ns)
			p.Release()
			return false, err
		}
		m.nsMu.Lock()
		m.pid, m.init, m.ns = pid, p, ns
		m.nsMu.Unlock()
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for sandbox init: %w", err)
	}
	return nil
}

// waitRunning waits for the sandbox's systemd to finish booting.
func (m *Machine) waitRunning(ctx context.Context) error {
	var last string
	err := pollUntil(ctx, 20*time.Millisecond, func() (bool, error) {
		select {
		case <-m.exited:
			return false, fmt.Errorf("boot process exited: %v", m.waitErr)
		default:
		}
		// Until the boot script has exec'd systemd, nsenter would land in
		// a half-built mount namespace.
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", m.pid)); err != nil || strings.TrimSpace(string(comm)) != "systemd" {
			return false, nil
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		out, _, err := m.Exec(cctx, "systemctl", "is-system-running")
		last = strings.TrimSpace(out)
		if err != nil && last == "" {
			last = err.Error()
		}
		switch last {
		case "running", "degraded":
			m.state = last
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for systemd to boot (last state %q): %w", last, err)
	}
	return nil
}

// Close kills the sandbox, waits for its processes to be gone and removes
// its cgroups and staging directory. It is safe to call more than once and
// concurrently; later calls return the first call's result.
func (m *Machine) Close() error {
	m.closeOnce.Do(func() { m.closeErr = m.close() })
	return m.closeErr
}

func (m *Machine) close() error {
	m.closing.Store(true)
	var errs []error
	if m.cmd != nil && m.cmd.Process != nil {
		// Killing the PID 1 of a PID namespace kills every process in
		// it; unshare then reaps it and exits. Only if that does not
		// happen (or PID 1 was never found) is unshare killed, and
		// --kill-child passes that on to its child.
		if m.init != nil && !m.hasExited() {
			if err := m.init.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				errs = append(errs, fmt.Errorf("kill sandbox init %d: %w", m.pid, err))
			}
			select {
			case <-m.exited:
			case <-time.After(10 * time.Second):
			}
		}
		if !m.hasExited() {
			if err := m.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				errs = append(errs, fmt.Errorf("kill unshare: %w", err))
			}
			select {
			case <-m.exited:
			case <-time.After(30 * time.Second):
				errs = append(errs, fmt.Errorf("sandbox boot process %d did not exit", m.cmd.Process.Pid))
			}
		}
	}
	if m.init != nil {
		m.init.Release()
	}
	m.nsMu.Lock()
	closeAll(m.ns)
	m.ns = nil
	m.nsMu.Unlock()
	if err := removeCgroups(context.Background(), m.cgroups); err != nil {
		errs = append(errs, err)
	}
	if m.staging != "" {
		if err := removeStaging(m.staging); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close sandbox %s: %w", m.id, err)
	}
	return nil
}

func (m *Machine) hasExited() bool {
	select {
	case <-m.exited:
		return true
	default:
		return false
	}
}

// nsTypes are the namespaces of a sandbox: their names in /proc/PID/ns and
// the matching nsenter options.
var nsTypes = []struct{ file, flag string }{
	{"mnt", "mount"},
	{"pid", "pid"},
	{"uts", "uts"},
	{"ipc", "ipc"},
	{"net", "net"},
	{"cgroup", "cgroup"},
}

// openNamespaces opens the namespaces of process pid, in nsTypes order.
func openNamespaces(pid int) ([]*os.File, error) {
	var fs []*os.File
	for _, t := range nsTypes {
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/%s", pid, t.file))
		if err != nil {
			closeAll(fs)
			return nil, fmt.Errorf("open namespace: %w", err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// removeStaging removes a staging directory and the boot script in it.
// Not RemoveAll: the tmpfs was only ever mounted on it in the sandbox's
// mount namespace, so on the host it holds just the script, and if it
// somehow holds more, that is better kept than recursed into.
func removeStaging(dir string) error {
	if err := os.Remove(filepath.Join(dir, bootScript)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove boot script: %w", err)
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove staging dir: %w", err)
	}
	return nil
}

// sandboxPath is PATH inside the sandbox.
const sandboxPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin"

var (
	goEnvOnce sync.Once
	goEnv     []string
)

// execEnv is the environment of commands run inside a sandbox.
func execEnv() []string {
	goEnvOnce.Do(func() { goEnv = hostGoEnv() })
	env := []string{
		"PATH=" + sandboxPath,
		"HOME=/root",
		"LANG=C.UTF-8",
		"SYSTEMD_PAGER=",
		"SYSTEMD_COLORS=0",
	}
	return append(env, goEnv...)
}

// hostGoEnv returns GOCACHE, GOMODCACHE and GOFLAGS as the host's go
// command sees them, so that builds inside a sandbox reuse the host's caches
// (read through the overlay; new entries land in the sandbox's tmpfs). It
// returns nothing if there is no go command.
func hostGoEnv() []string {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = "/usr/local/go/bin/go"
	}
	out, err := exec.Command(gobin, "env", "-json", "GOCACHE", "GOMODCACHE", "GOFLAGS").Output()
	if err != nil {
		return nil
	}
	var vars map[string]string
	if json.Unmarshal(out, &vars) != nil {
		return nil
	}
	var env []string
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOFLAGS"} {
		if v := vars[k]; v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// bindArgs validates the directories to bind-mount and returns them as
// boot-inner.sh arguments.
// checkRoot refuses an Options.Root that the overlay cannot take as its
// lower layer, and Root with Legacy (a systemd that needs a root of its
// own refuses cgroup v1).
func checkRoot(opts Options) error {
	if opts.Root == "" {
		return nil
	}
	if opts.Legacy {
		return errors.New("Root and Legacy together: a newer systemd boots with the cgroup v2 hierarchy alone")
	}
	if !filepath.IsAbs(opts.Root) || strings.ContainsAny(opts.Root, ",:\\") {
		return fmt.Errorf("root %q: want an absolute path without ',', ':' or '\\'", opts.Root)
	}
	if fi, err := os.Stat(opts.Root); err != nil {
		return fmt.Errorf("root: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("root %s: not a directory", opts.Root)
	}
	return nil
}

func bindArgs(opts Options) ([]string, error) {
	var binds []string
	if opts.Repo != "" {
		binds = append(binds, opts.Repo)
	}
	binds = append(binds, opts.Binds...)
	for i, b := range binds {
		path, ro := strings.CutSuffix(b, ":ro")
		if !filepath.IsAbs(path) {
			return nil, fmt.Errorf("bind %q: not an absolute path", b)
		}
		// The boot script needs a canonical path (see boot-inner.sh).
		path, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("bind %q: %w", b, err)
		}
		if path == "/" {
			return nil, fmt.Errorf("bind %q: cannot bind the root directory", b)
		}
		if fi, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("bind %q: %w", b, err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("bind %q: not a directory", b)
		}
		if ro {
			path += ":ro"
		}
		binds[i] = path
	}
	return binds, nil
}

// checkHost reports what this host lacks to boot a sandbox.
func checkHost() error {
	if os.Geteuid() != 0 {
		return errors.New("sandbox: must run as root")
	}
	for _, tool := range []string{"unshare", "nsenter", "setpriv", "findmnt", "mountpoint", "ip", "bash"} {
		if _, err := lookPath(tool); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	if _, err := os.Stat("/lib/systemd/systemd"); err != nil {
		return fmt.Errorf("sandbox: no systemd: %w", err)
	}
	return nil
}

// lookPath finds a tool in the sandbox's PATH, which is also what the boot
// and exec commands use on the host.
func lookPath(tool string) (string, error) {
	for _, dir := range filepath.SplitList(sandboxPath) {
		p := filepath.Join(dir, tool)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", tool, sandboxPath)
}

// selfStartTime returns this process's start time in clock ticks since
// boot, which together with its pid identifies it across pid reuse.
func selfStartTime() (uint64, error) {
	return startTime(os.Getpid())
}

func startTime(pid int) (uint64, error) {
	f, err := procStatFields(pid)
	if err != nil {
		return 0, err
	}
	// Field 22 (starttime); f starts at field 3 (state).
	v, err := strconv.ParseUint(f[22-3], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse start time of %d: %w", pid, err)
	}
	return v, nil
}

func parentPID(pid int) (int, error) {
	f, err := procStatFields(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[4-3])
}

// procStatFields returns the fields of /proc/pid/stat after the command
// name, i.e. starting with field 3 (state).
func procStatFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 22-3+1 {
		return nil, fmt.Errorf("parse /proc/%d/stat: too few fields", pid)
	}
	return f, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
