package health

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/units"
)

// The ways a check can end without an HTTP status.
const (
	Timeout = "timeout" // no status line within health_timeout_ms
	Refused = "refused" // nothing listens on the port (on 127.0.0.1 nor ::1)
	Reset   = "reset"   // the connection was closed or reset before the status line
	Failed  = "error"   // anything else: a malformed answer, a check that could not be made
)

// Result is what one check of one instance found.
type Result struct {
	// Status is the answer's HTTP status, 100 to 599; 0 when there was
	// none, and Failure says why.
	Status  int
	Failure string
	// Latency is how long the status line took (or the check, without
	// one).
	Latency time.Duration
}

// Healthy tells whether the check passed: a 2xx or 3xx status.
func (r Result) Healthy() bool { return r.Status >= 200 && r.Status < 400 }

// Answered tells whether the instance answered with a status at all.
func (r Result) Answered() bool { return r.Status != 0 }

// String is the result as the child prints it and the state keeps it:
// the status ("503") or the failure ("timeout").
func (r Result) String() string {
	if r.Status != 0 {
		return strconv.Itoa(r.Status)
	}
	if r.Failure == "" {
		return Failed
	}
	return r.Failure
}

// Describe is the result for a person: "status 503 after 12ms", "no
// answer within 2s".
func (r Result) Describe(timeout time.Duration) string {
	switch {
	case r.Status != 0:
		return fmt.Sprintf("status %d after %s", r.Status, r.Latency.Round(time.Millisecond))
	case r.Failure == Timeout:
		return fmt.Sprintf("no answer within %s", timeout)
	case r.Failure == Refused:
		return "connection refused (nothing listens on the health port)"
	case r.Failure == Reset:
		return "connection closed before an answer"
	}
	return "the check failed"
}

// maxLine is the longest line the child may print for one instance:
// "surge refused 600000" and room to spare.
const maxLine = 32

// latencySlack is how much longer than the timeout a line may claim a
// check took: a check ends at its timeout, the child not long after.
const latencySlack = 5 * time.Second

// MaxOutput is the most the child may print when asked about n
// instances; the parent reads no more.
func MaxOutput(n int) int { return n * maxLine }

// indexToken is an instance's index as the child's arguments and lines
// write it: the decimal index, or "surge".
func indexToken(i int) string {
	if i == units.Surge {
		return units.SurgeName
	}
	return strconv.Itoa(i)
}

// parseIndex reads indexToken's form back, strictly: "surge", "0", or
// at most 4 digits without a leading zero (a project has at most 1024
// instances).
func parseIndex(s string) (int, bool) {
	if s == units.SurgeName {
		return units.Surge, true
	}
	if s == "" || len(s) > 4 || (len(s) > 1 && s[0] == '0') || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// FormatLine is the child's line for instance index: "INDEX RESULT
// LATENCY_MS\n", e.g. "0 200 3" or "surge timeout 2000".
func FormatLine(index int, r Result) string {
	return indexToken(index) + " " + r.String() + " " + strconv.FormatInt(r.Latency.Milliseconds(), 10) + "\n"
}

// Target is one instance the child is to check: its index and the port
// it answers on.
type Target struct{ Index, Port int }

// String is the target as an argument of the child: "INDEX:PORT".
func (t Target) String() string { return indexToken(t.Index) + ":" + strconv.Itoa(t.Port) }

// ParseTarget reads Target.String's form back.
func ParseTarget(s string) (Target, error) {
	i, p, ok := strings.Cut(s, ":")
	index, iok := parseIndex(i)
	port, err := strconv.Atoi(p)
	if !ok || !iok || err != nil || port < 1 || port > 65535 || strconv.Itoa(port) != p {
		return Target{}, fmt.Errorf("%q is not INDEX:PORT (like 0:3100 or surge:3104)", s)
	}
	return Target{Index: index, Port: port}, nil
}

// ParseOutput reads the child's output: one FormatLine per line, each for
// an instance of asked, none twice, at most MaxOutput(len(asked)) bytes,
// latencies no longer than the timeout allows. It is strict: a single
// line out of form refuses the whole output (the child runs as the app's
// user, who may have written it), and nothing is believed of an instance
// that was not asked about. Instances the output has no line for are
// missing from the map.
func ParseOutput(out []byte, asked []int, timeout time.Duration) (map[int]Result, error) {
	if len(out) > MaxOutput(len(asked)) {
		return nil, fmt.Errorf("%d bytes of output for %d instances, more than %d", len(out), len(asked), MaxOutput(len(asked)))
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		return nil, fmt.Errorf("the output does not end with a newline")
	}
	want := make(map[int]bool, len(asked))
	for _, i := range asked {
		want[i] = true
	}
	got := make(map[int]Result, len(asked))
	lines := bytes.Split(out, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline
	for n, raw := range lines {
		line := string(raw)
		bad := func(why string) error {
			return fmt.Errorf("line %d %.40q: %s", n+1, line, why)
		}
		if len(line) > maxLine {
			return nil, bad("too long")
		}
		f := strings.Split(line, " ")
		if len(f) != 3 {
			return nil, bad("not INDEX RESULT LATENCY_MS")
		}
		index, ok := parseIndex(f[0])
		switch {
		case !ok:
			return nil, bad("no instance index")
		case !want[index]:
			return nil, bad("an instance that was not asked about")
		}
		if _, dup := got[index]; dup {
			return nil, bad("a second line for that instance")
		}
		var r Result
		switch f[1] {
		case Timeout, Refused, Reset, Failed:
			r.Failure = f[1]
		default:
			s, err := strconv.Atoi(f[1])
			if err != nil || len(f[1]) != 3 || s < 100 || s > 599 {
				return nil, bad("no status (100-599) nor " + Timeout + ", " + Refused + ", " + Reset + " or " + Failed)
			}
			r.Status = s
		}
		ms, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || ms < 0 || strconv.FormatInt(ms, 10) != f[2] || time.Duration(ms)*time.Millisecond > timeout+latencySlack {
			return nil, bad("no latency of 0 to " + strconv.FormatInt((timeout+latencySlack).Milliseconds(), 10) + " ms")
		}
		r.Latency = time.Duration(ms) * time.Millisecond
		got[index] = r
	}
	return got, nil
}
