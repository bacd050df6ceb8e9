// Package analyze asks systemd-analyze what bm2 tells the user of a unit
// or a project: the next elapse of a calendar expression (bm2 check's next
// run of restart_schedule) and a unit's exposure (bm2 status's sandbox
// line).
package analyze

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// ErrNotInstalled is Calendar's answer on a host without systemd-analyze.
var ErrNotInstalled = errors.New("no systemd-analyze")

// CalendarRefused is systemd-analyze's refusal of a calendar expression
// that config's subset took: a bug of bm2's, said as such.
type CalendarRefused struct {
	Expr string
	Msg  string // what systemd-analyze said
}

func (e *CalendarRefused) Error() string {
	return fmt.Sprintf("systemd-analyze calendar refuses %q: %s", e.Expr, e.Msg)
}

// Never is what systemd-analyze calendar says of an expression that
// never comes (again): "2020-01-01", "*-02-30".
const Never = "never"

// Calendar is the next elapse of expr (Env.Calendar's default) as
// `systemd-analyze calendar --iterations=1` says it ("Sun 2026-12-06
// 04:00:00 UTC", in the local time zone, or "never").
func Calendar(ctx context.Context, expr string) (string, error) {
	path, err := exec.LookPath("systemd-analyze")
	if err != nil {
		return "", ErrNotInstalled
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "calendar", "--iterations=1", expr)
	cmd.Env = append(os.Environ(), "SYSTEMD_COLORS=0", "SYSTEMD_PAGER=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = ee.Error()
		}
		return "", &CalendarRefused{Expr: expr, Msg: msg}
	}
	if err != nil {
		return "", fmt.Errorf("systemd-analyze calendar: %w", err)
	}
	return nextElapse(out)
}

// nextElapse reads the "Next elapse:" line of systemd-analyze calendar.
func nextElapse(out []byte) (string, error) {
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Next elapse:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("systemd-analyze calendar: no next elapse in its output")
}

// Security asks systemd-analyze security for a unit's exposure, e.g.
// "1.2 OK"; extra are more of its flags (--user).
func Security(ctx context.Context, unit string, extra ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args := append(append([]string{"security", "--no-pager"}, extra...), unit)
	cmd := exec.CommandContext(ctx, "systemd-analyze", args...)
	cmd.Env = append(os.Environ(), "SYSTEMD_COLORS=0", "SYSTEMD_PAGER=")
	out, err := cmd.Output()
	if m := exposureRE.FindSubmatch(out); m != nil {
		return string(m[1]), nil
	}
	if err == nil {
		err = fmt.Errorf("no exposure level in its output")
	}
	return "", fmt.Errorf("systemd-analyze %s: %w", strings.Join(args, " "), err)
}

var exposureRE = regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+ \S+)`)
