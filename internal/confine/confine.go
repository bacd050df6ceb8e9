package confine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/safefs"
)

// Keys are the [Service] settings of an instance that make its account
// and its sandbox: what a program run on its behalf must get too.
var Keys = []string{
	"User", "Group", "DynamicUser", "SupplementaryGroups", "RemoveIPC",
	"NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices",
	"PrivateUsers", "PrivateIPC", "PrivateNetwork", "ProtectKernelTunables", "ProtectKernelModules",
	"ProtectKernelLogs", "ProtectControlGroups", "ProtectClock", "ProtectHostname", "ProtectProc",
	"ProcSubset", "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID", "LockPersonality",
	"MemoryDenyWriteExecute", "RestrictAddressFamilies", "SystemCallArchitectures", "SystemCallFilter",
	"SystemCallErrorNumber", "CapabilityBoundingSet", "AmbientCapabilities", "UMask", "KeyringMode",
	"ReadWritePaths", "ReadOnlyPaths", "InaccessiblePaths", "NoExecPaths", "ExecPaths",
	// Its limits: a run on its behalf lives in the project's slice, under
	// the instance's own resource settings.
	"Slice", "TasksMax", "MemoryMax", "MemoryHigh", "CPUQuota", "CPUWeight", "LimitNOFILE",
}

var keySet = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range Keys {
		m[k] = true
	}
	return m
}()

// Properties reads the settings among Keys from unit files, the template
// first and then each drop-in in systemd's order, as "Key=value" for
// systemd-run -p (a later assignment overrides or extends an earlier one
// there as in the files). A value written with a specifier other than %%
// is an error: it cannot be expanded outside systemd, and leaving it out
// could widen the sandbox.
func Properties(files ...[]byte) ([]string, error) {
	var out []string
	for _, data := range files {
		section := ""
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var cont string
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if cont != "" {
				line, cont = cont+" "+line, ""
			}
			if strings.HasSuffix(line, "\\") {
				cont = strings.TrimSuffix(line, "\\")
				continue
			}
			switch {
			case line == "" || line[0] == '#' || line[0] == ';':
				continue
			case line[0] == '[':
				section = strings.Trim(line, "[]")
				continue
			}
			if section != "Service" {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || !keySet[k] {
				continue
			}
			val, err := unescape(v)
			if err != nil {
				return nil, fmt.Errorf("%s=%s: %w", k, v, err)
			}
			out = append(out, k+"="+val)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return append(out, Extra...), nil
}

// Extra is what every run gets on top of the instance's settings. A
// version needs no network and no new privilege; and the run may bind
// nothing, in no network namespace: bind(2) and listen(2) are taken out
// of its system call filter, which every systemd has (systemd-run 252
// cannot pass SocketBindDeny= to a transient unit). Were the app, as the
// same user, to drive the process in the moment it runs, it could not
// take a port, its own network namespace's or, through a socket passed
// to it, the host's.
var Extra = []string{
	"NoNewPrivileges=yes", "PrivateNetwork=yes",
	"SystemCallFilter=~bind listen",
}

// unescape turns %% into %; any other specifier is refused.
func unescape(v string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			b.WriteByte(v[i])
			continue
		}
		if i+1 < len(v) && v[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		return "", errors.New("a specifier bm2 cannot expand outside systemd")
	}
	return b.String(), nil
}

// Options is where the transient service runs.
type Options struct {
	// User: the user's own manager (systemd-run --user), reached through
	// RuntimeDir ($XDG_RUNTIME_DIR); otherwise the system manager.
	User       bool
	RuntimeDir string
	// Command is systemd-run; "" means the one on the fixed search path.
	Command string
	// Timeout bounds the run (RuntimeMaxSec= of the service, and the
	// wait); 0 means 10 s.
	Timeout time.Duration
}

// ExitExec is systemd's exit status of a service whose program could not
// be executed (203/EXEC): not there for the account, or not executable.
const ExitExec = 203

// Run runs argv once in a transient service with props (Properties) and
// returns what it wrote to standard output (at most 4 KiB). An exit
// status 203/EXEC comes back as an error that wraps fs.ErrPermission:
// the account cannot run it in its sandbox.
func Run(ctx context.Context, props []string, opts Options, argv ...string) (string, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	command := opts.Command
	if command == "" {
		command = lookPath("systemd-run")
	}
	// Type=simple: a program that cannot be executed ends as exit status
	// 203 (which --wait passes on), not as a failed start job.
	args := []string{"--quiet", "--wait", "--pipe", "--collect",
		"--description=bm2: " + strings.Join(argv, " ") + ", confined as its instance",
		"-p", "RuntimeMaxSec=" + strconv.FormatInt(timeout.Milliseconds(), 10) + "ms",
		"-p", "WorkingDirectory=/", "-E", "NO_COLOR=1"}
	if opts.User {
		args = append([]string{"--user"}, args...)
	}
	for _, p := range props {
		args = append(args, "-p", p)
	}
	args = append(args, "--")
	args = append(args, argv...)
	cmd := exec.CommandContext(ctx, command, args...)
	cmd.WaitDelay = time.Second
	// systemd-run itself gets only what it needs to find its manager: no
	// environment of the caller reaches it (nor the service, which gets
	// systemd's own).
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	if opts.User {
		cmd.Env = append(cmd.Env, "XDG_RUNTIME_DIR="+opts.RuntimeDir)
	}
	cmd.Dir = "/"
	stdout, stderr := safefs.Capped{Max: 4096}, safefs.Capped{Max: 4096}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Stdin = nil
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("no answer within %s", timeout)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == ExitExec:
		return "", fmt.Errorf("%w: systemd could not execute %s as the instance's account in its sandbox (exit status 203/EXEC)", fs.ErrPermission, argv[0])
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg, _, _ = strings.Cut(msg, "\n")
			return "", fmt.Errorf("%w: %s", err, msg)
		}
		return "", err
	}
	return stdout.String(), nil
}

// lookPath finds a command on the fixed search path (never $PATH: root's
// commands do not take it from the caller).
func lookPath(name string) string {
	for _, d := range []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"} {
		p := d + "/" + name
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return "/usr/bin/" + name
}
