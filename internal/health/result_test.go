package health

import (
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/units"
)

// What the child prints, the parent reads back the same.
func TestFormatAndParseOutput(t *testing.T) {
	want := map[int]Result{
		0:           {Status: 200, Latency: 3 * time.Millisecond},
		1:           {Status: 503, Latency: 12 * time.Millisecond},
		2:           {Failure: Timeout, Latency: 2000 * time.Millisecond},
		3:           {Failure: Refused},
		1023:        {Failure: Reset, Latency: time.Millisecond},
		units.Surge: {Failure: Failed, Latency: 7 * time.Millisecond},
	}
	asked := []int{0, 1, 2, 3, 1023, units.Surge}
	var out strings.Builder
	for _, i := range asked {
		out.WriteString(FormatLine(i, want[i]))
	}
	if !strings.HasPrefix(out.String(), "0 200 3\n1 503 12\n2 timeout 2000\n3 refused 0\n1023 reset 1\nsurge error 7\n") {
		t.Fatalf("lines:\n%s", out.String())
	}
	got, err := ParseOutput([]byte(out.String()), asked, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i, r := range want {
		if got[i] != r {
			t.Errorf("instance %d: %+v, want %+v", i, got[i], r)
		}
	}
	// An instance without a line is missing, not invented.
	got, err = ParseOutput([]byte("0 200 1\n"), []int{0, 1}, time.Second)
	if _, ok := got[1]; err != nil || ok || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := ParseOutput(nil, []int{0}, time.Second); err != nil || len(got) != 0 {
		t.Fatalf("no output: %v %v", got, err)
	}
}

// The child runs as the app's user, who can ptrace it and print what it
// likes: every line out of form refuses the whole output, and no line
// speaks for an instance the parent did not ask about.
func TestParseOutputRefusesHostileLines(t *testing.T) {
	asked := []int{0, 1, units.Surge}
	for _, c := range []struct{ name, out, why string }{
		{"not asked", "0 200 1\n7 200 1\n", "not asked"},
		{"another project's instance", "api-0 200 1\n", "no instance index"},
		{"twice", "0 200 1\n0 503 1\n", "a second line"},
		{"more lines than asked", "0 200 1\n1 200 1\nsurge 200 1\n0 200 1\n", "a second line"},
		{"too much output", strings.Repeat("0 200 1\n", 40), "more than"},
		{"long line", "0 200 " + strings.Repeat("1", 40) + "\n", "too long"},
		{"no newline at the end", "0 200 1", "newline"},
		{"CRLF", "0 200 1\r\n", "latency"},
		{"tab", "0\t200 1\n", "not INDEX"},
		{"two spaces", "0  200 1\n", "not INDEX"},
		{"trailing field", "0 200 1 x\n", "not INDEX"},
		{"empty line", "0 200 1\n\n", "not INDEX"},
		{"leading zero", "00 200 1\n", "no instance index"},
		{"plus sign", "+1 200 1\n", "no instance index"},
		{"negative index", "-2 200 1\n", "no instance index"},
		{"status too low", "0 099 1\n", "no status"},
		{"status too high", "0 600 1\n", "no status"},
		{"status of two digits", "0 20 1\n", "no status"},
		{"status with a sign", "0 +20 1\n", "no status"},
		{"unknown failure", "0 ok 1\n", "no status"},
		{"failure in capitals", "0 TIMEOUT 1\n", "no status"},
		{"negative latency", "0 200 -1\n", "latency"},
		{"latency with a leading zero", "0 200 01\n", "latency"},
		{"latency past the timeout", "0 200 7001\n", "latency"},
		{"control character", "0 200 1\x1b[2J\n", "latency"},
		{"non-ASCII digits", "0 200 １\n", "latency"},
	} {
		got, err := ParseOutput([]byte(c.out), asked, 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), c.why) || got != nil {
			t.Errorf("%s: %q gave %v, %v; want an error saying %q", c.name, c.out, got, err, c.why)
		}
	}
	// The message quotes the line, escaped and cut short: it goes to the
	// journal.
	_, err := ParseOutput([]byte("0 \x1b]0;pwned\x07 1\n"), asked, time.Second)
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") {
		t.Errorf("message %q", err)
	}
}

func TestTarget(t *testing.T) {
	for _, tg := range []Target{{0, 3100}, {1023, 65535}, {units.Surge, 1}} {
		back, err := ParseTarget(tg.String())
		if err != nil || back != tg {
			t.Errorf("%v: %v %v", tg, back, err)
		}
	}
	for _, s := range []string{"", "0", "0:", ":80", "0:0", "0:65536", "0:080", "x:80", "01:80", "0:80:1", "surge:+80"} {
		if _, err := ParseTarget(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestResultWords(t *testing.T) {
	for _, c := range []struct {
		r        Result
		s, words string
		healthy  bool
	}{
		{Result{Status: 204, Latency: 2 * time.Millisecond}, "204", "status 204 after 2ms", true},
		{Result{Status: 302}, "302", "status 302 after 0s", true},
		{Result{Status: 404}, "404", "status 404 after 0s", false},
		{Result{Status: 199}, "199", "status 199 after 0s", false},
		{Result{Failure: Timeout}, "timeout", "no answer within 2s", false},
		{Result{Failure: Refused}, "refused", "connection refused (nothing listens on the health port)", false},
		{Result{}, "error", "the check failed", false},
	} {
		if c.r.String() != c.s || c.r.Describe(2*time.Second) != c.words || c.r.Healthy() != c.healthy {
			t.Errorf("%+v: %q %q %v", c.r, c.r.String(), c.r.Describe(2*time.Second), c.r.Healthy())
		}
	}
}
