package health

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/safefs"
)

// ChildCheck is the CheckFunc of bm2-probe: the child `bm2-probe
// health-get` (self), started as id with no supplementary group, an
// empty environment and / as its directory, killed with its parent, its
// output read up to MaxOutput and parsed strictly.
func ChildCheck(self string) CheckFunc {
	return func(ctx context.Context, id *identity.Identity, targets []Target, path string, timeout time.Duration) (map[int]Result, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout+childSlack)
		defer cancel()
		args := []string{"health-get", strconv.FormatInt(timeout.Milliseconds(), 10), path}
		asked := make([]int, len(targets))
		for k, t := range targets {
			args = append(args, t.String())
			asked[k] = t.Index
		}
		if id != nil {
			if err := unreadableBy(self, id); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrCheckNotMade, err)
			}
		}
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Env = []string{}
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if id != nil {
			cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(id.UID), Gid: uint32(id.GID), Groups: []uint32{}}
		}
		out := &safefs.Capped{Max: MaxOutput(len(targets))}
		errOut := &safefs.Capped{Max: 1 << 10}
		cmd.Stdout, cmd.Stderr = killPast{out, cancel}, errOut
		cmd.WaitDelay = time.Second
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("%w: start %s as %s: %v", ErrCheckNotMade, self, describeID(id), err)
		}
		runErr := cmd.Wait()
		if out.Dropped() {
			return map[int]Result{}, fmt.Errorf("the check's output is refused: more than %d bytes", MaxOutput(len(targets)))
		}
		got, err := ParseOutput(out.Bytes(), asked, timeout)
		if err != nil {
			return map[int]Result{}, fmt.Errorf("the check's output is refused: %w", err)
		}
		if runErr != nil {
			return got, fmt.Errorf("the check (as %s) ended badly: %v; %q", describeID(id), runErr, firstLine(errOut.String()))
		}
		return got, nil
	}
}

// unreadableBy is nil when id (with no supplementary group) cannot read
// the file at self, which it executes. The kernel makes a process that
// execs a file it cannot read non-dumpable: the app, which runs as the
// same user, can then neither ptrace the child nor open its
// /proc/PID/mem, and so cannot make it do anything. (Before the exec the
// child is root's, then non-dumpable from its setuid on.) A bm2-probe
// others can read (not 0711, as make install and the package leave it)
// is refused: the check is not made, rather than made from a process
// the app could drive.
func unreadableBy(self string, id *identity.Identity) error {
	fi, err := os.Stat(self)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("stat %s: no owner", self)
	}
	var bit os.FileMode = 0o004
	switch {
	case int(st.Uid) == id.UID:
		bit = 0o400
	case int(st.Gid) == id.GID:
		bit = 0o040
	}
	if fi.Mode().Perm()&bit != 0 {
		return fmt.Errorf("%s is readable by %s (mode %04o), who would run it as the check's child and could trace it: "+
			"chmod 0711 %s (make install and the bm2 package install it so)", self, describeID(id), fi.Mode().Perm(), self)
	}
	return nil
}

// killPast ends the child (cancel) as soon as it has written more than
// its Capped keeps: what it says next is not read anyway.
type killPast struct {
	c      *safefs.Capped
	cancel context.CancelFunc
}

func (k killPast) Write(p []byte) (int, error) {
	n, err := k.c.Write(p)
	if k.c.Dropped() {
		k.cancel()
	}
	return n, err
}

// childSlack is how long the child may take beyond the check's timeout
// (starting, writing its lines) before it is killed.
const childSlack = 3 * time.Second

func describeID(id *identity.Identity) string {
	if id == nil {
		return "this user"
	}
	return fmt.Sprintf("uid %d gid %d", id.UID, id.GID)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Child is `bm2-probe health-get TIMEOUT_MS PATH INDEX:PORT...`, the
// child [ChildCheck] starts, as the instances' user: one GET per
// instance, all at once, and one line each ([FormatLine]), in the order
// asked.
func Child(ctx context.Context, args []string, out io.Writer) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: bm2-probe health-get TIMEOUT_MS PATH INDEX:PORT... (bm2-probe health runs it)")
	}
	ms, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || ms <= 0 || ms > time.Hour.Milliseconds() {
		return fmt.Errorf("health-get: %q is not a timeout in milliseconds", args[0])
	}
	path := args[1]
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("health-get: %q is not a path", path)
	}
	// Non-dumpable already (bm2-probe is not readable by this user, see
	// unreadableBy); said again, in case it ever were.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("health-get: prctl(PR_SET_DUMPABLE): %v", err)
	}
	targets := make([]Target, 0, len(args)-2)
	for _, a := range args[2:] {
		t, err := ParseTarget(a)
		if err != nil {
			return fmt.Errorf("health-get: %v", err)
		}
		targets = append(targets, t)
	}
	timeout := time.Duration(ms) * time.Millisecond
	results := make([]Result, len(targets))
	done := make(chan struct{})
	for k, t := range targets {
		go func() {
			results[k] = Get(ctx, t.Port, path, timeout)
			done <- struct{}{}
		}()
	}
	for range targets {
		<-done
	}
	var b strings.Builder
	for k, t := range targets {
		b.WriteString(FormatLine(t.Index, results[k]))
	}
	_, err = io.WriteString(out, b.String())
	return err
}
