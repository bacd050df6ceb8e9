package config

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

// calendarCases is bm2's calendar subset at its edges: what it takes
// (ok), and what it refuses, with a word of the reason. Some of the
// refused ones systemd takes (the legacy Mon-Fri, "~", fractions of a
// second, other zones): the subset is smaller on purpose, never larger.
var calendarCases = []struct {
	expr string
	ok   bool
	why  string // a part of the refusal
}{
	// Weekdays.
	{"Sun 04:00", true, ""},
	{"Sun *-*-* 04:00:00", true, ""},
	{"sun 04:00", true, ""},
	{"SUNDAY 04:00", true, ""},
	{"Monday", true, ""},
	{"Mon..Fri 09:30", true, ""},
	{"Mon,Wed,Fri 00:00", true, ""},
	{"Sat..Sun", true, ""},
	{"Mon..Mon", true, ""},
	{"Mon..Wed,Fri..Sun 12:00", true, ""},
	{"Mon 2026-12-07 04:00", true, ""},
	{"Sat *-*-1..7 04:00", true, ""},
	{"Mon-Fri", false, `with ".."`},
	{"Mon,", false, "empty item"},
	{"Fri..Mon", false, "from Monday towards Sunday"},
	{"Mon..Wed..Fri", false, "not a weekday"},
	{"Mo 04:00", false, "not a weekday"},
	{"Tues 04:00", false, "not a weekday"},
	{"04:00 Sun", false, "weekdays come first"},
	// Dates.
	{"*-*-*", true, ""},
	{"*-*-* 04:00:00", true, ""},
	{"*-*-01", true, ""},
	{"*-*-01 02:00", true, ""},
	{"12-24", true, ""},
	{"2026-12-24 18:00", true, ""},
	{"2026..2030-01-01", true, ""},
	{"2026/2-01-01", true, ""},
	{"1970-01-01", true, ""},
	{"2199-12-31 23:59:59", true, ""},
	{"*-1,4,7,10-01", true, ""},
	{"*-02-29 00:00", true, ""},
	{"*-*-31", true, ""},
	{"*-*-1..7 04:00", true, ""},
	{"*-*-01/7", true, ""},
	{"2026-13-01", false, "out of range"},
	{"*-*-32", false, "out of range"},
	{"*-00-01", false, "out of range"},
	{"2200-01-01", false, "out of range"},
	{"1969-12-31", false, "out of range"},
	{"26-01-01", false, "4 digits"},
	{"2026-01-01-01", false, "not a date"},
	{"*-*~01", false, `"~"`},
	{"*-*-*/2", false, "*/N"},
	{"*-*-25/7", false, "past 31"},
	{"2026-01-01 2026-01-02", false, "second date"},
	// Times.
	{"04:00", true, ""},
	{"4:0", true, ""},
	{"04:00:30", true, ""},
	{"*:00/15", true, ""},
	{"*:00/15:00", true, ""},
	{"*:*:00/10", true, ""},
	{"00/2:00", true, ""},
	{"*:0,30", true, ""},
	{"*:10..50/10", true, ""},
	{"08..18:00", true, ""},
	{"09..17:00/30", true, ""},
	{"*:*:59", true, ""},
	{"*:*:*", true, ""},
	{"*:59", true, ""},
	{"23:00", true, ""},
	{"*:00/59", true, ""},
	{"5", false, "neither a date"},
	{"*/15:00", false, "*/N"},
	{"*:50/15", false, "past 59"},
	{"*:0/60", false, "whole range"},
	{"*:00/0", false, "every 0"},
	{"*:*:60", false, "out of range"},
	{"24:00", false, "out of range"},
	{"*:60", false, "out of range"},
	{"5..3:00", false, "must go up"},
	{"10..10:00", false, "must go up"},
	{"*:0..2/3", false, "longer than its range"},
	{"*,5:00", false, "stands alone"},
	{"04:00:00:00", false, "not a time"},
	{"23:59:59.5", false, "fractions"},
	{"4am", false, "neither a date"},
	{"Sun 4am", false, "neither a date"},
	{"04:00 2026-01-01", false, "after the time"},
	{"1:2:3:", false, "not a time"},
	{"*:1...5", false, "a range is written"},
	// Shorthands and zones.
	{"minutely", true, ""},
	{"hourly", true, ""},
	{"daily", true, ""},
	{"weekly", true, ""},
	{"monthly", true, ""},
	{"quarterly", true, ""},
	{"semiannually", true, ""},
	{"yearly", true, ""},
	{"annually", true, ""},
	{"daily UTC", true, ""},
	{"Sun 04:00 UTC", true, ""},
	{"04:00 UTC", true, ""},
	{"Daily", false, "lower case"},
	{"daily Sun", false, "stands alone"},
	{"Sun daily", false, "stands alone"},
	{"UTC", false, "a time zone alone"},
	{"04:00 utc", false, "time zone"},
	{"*-*-* 04:00 Europe/Berlin", false, "time zone"},
	{"04:00 CET", false, "time zone"},
	{"04:00 +0200", false, "time zone"},
	{"anually", false, "not a weekday"},
	// The text itself.
	{"", false, "must not be empty"},
	{"bogus", false, "not a weekday"},
	{"Sun  04:00", false, "one space"},
	{" daily", false, "one space"},
	{"daily ", false, "one space"},
	{"Sun\t04:00", false, "has no place"},
	{"@1700000000", false, "@TIMESTAMP"},
	{"%H:00", false, "has no place"},
	{strings.Repeat("0,", 60) + "0:00", false, "more than 60"},
	{"*-*-* " + strings.Repeat("0", 300), false, "more than 256"},
}

// The subset takes what it documents and refuses the rest with a reason.
func TestCheckCalendar(t *testing.T) {
	for _, c := range calendarCases {
		err := CheckCalendar(c.expr)
		switch {
		case c.ok && err != nil:
			t.Errorf("%q refused: %v", c.expr, err)
		case !c.ok && err == nil:
			t.Errorf("%q accepted", c.expr)
		case !c.ok && !strings.Contains(err.Error(), c.why):
			t.Errorf("%q: %v\nwant it to say %q", c.expr, err, c.why)
		case !c.ok && !strings.HasSuffix(err.Error(), calendarExamples):
			t.Errorf("%q: no examples: %v", c.expr, err)
		}
	}
}

// generatedCalendars are expressions made of the subset's parts, in every
// position, with values at the edges of each field: more than a table
// would list, for the comparison with systemd.
func generatedCalendars() []string {
	weekdays := []string{"", "Mon", "fri", "Tue..Thu", "Sat,Sun", "Sun..Sat", "Mon..Sun", "Wed..Tue"}
	dates := []string{"", "*-*-*", "*-*-31", "2026-02-29", "*-02-30", "1970..2199-*-*", "2199/1-12-31", "*-12/1-01",
		"*-11/2-01", "*-*-30/1", "*-*-31/1", "*-1..12-1..31", "*-12..1-01", "*-6..6-01", "2026-*-1/30", "*-*-1/31", "*-*-0"}
	times := []string{"", "00:00", "23:59:59", "*:*:0/59", "*:*:1/59", "*:*:58..59", "0..23:0..59:0..59", "*:30..59/29",
		"*:30..59/30", "0/23:00", "1/23:00", "00..00:00", "0,0,0:00", "*:*:*", "12:*", "*:7/52", "*:7/53"}
	var out []string
	n := 0
	for _, w := range weekdays {
		for _, d := range dates {
			for _, tm := range times {
				n++
				if n%5 != 0 && (w != "" || d != "") { // a fifth of the combinations, every time alone
					continue
				}
				var parts []string
				for _, p := range []string{w, d, tm} {
					if p != "" {
						parts = append(parts, p)
					}
				}
				if len(parts) > 0 {
					out = append(out, strings.Join(parts, " "))
				}
			}
		}
	}
	return out
}

// Every expression the subset takes, systemd takes too, and every one
// systemd refuses, the subset refuses: systemd-analyze calendar is asked
// about each case and each generated expression.
func TestCalendarAgreesWithSystemd(t *testing.T) {
	analyze, err := testutil.LookCommand("systemd-analyze")
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no systemd-analyze", Fix: "sudo apt-get install systemd"}, err)
	}
	exprs := generatedCalendars()
	for _, c := range calendarCases {
		exprs = append(exprs, c.expr)
	}
	accepted, refused := 0, 0
	for _, expr := range exprs {
		cmd := exec.Command(analyze, "calendar", "--iterations=1", expr)
		cmd.Env = append(os.Environ(), "TZ=UTC", "SYSTEMD_COLORS=0")
		out, err := cmd.CombinedOutput()
		systemd := err == nil
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("systemd-analyze: %v", err)
		}
		ours := CheckCalendar(expr)
		if ours == nil {
			accepted++
		} else {
			refused++
		}
		// The two directions of the rule are one check: taken by the
		// subset and refused by systemd.
		if ours == nil && !systemd {
			t.Errorf("%q: the subset takes it, systemd refuses it:\n%s", expr, out)
		}
	}
	if accepted < 100 || refused < 100 {
		t.Fatalf("only %d accepted and %d refused: the comparison proves little", accepted, refused)
	}
	t.Logf("%d expressions: %d taken by the subset, %d refused", len(exprs), accepted, refused)
}

// A refusal names the file, the line and the key.
func TestRestartScheduleError(t *testing.T) {
	_, err := Parse("/etc/bm2/s.toml", []byte("name = \"s\"\nscript = \"a.js\"\ncwd = \"/srv/s\"\nport = 3000\nrestart_schedule = \"Sun 4am\"\n"), Options{})
	want := `/etc/bm2/s.toml:5: restart_schedule: "Sun 4am": "4am" is neither a date ([YEAR-]MONTH-DAY, like *-*-01) nor a time (HOUR:MINUTE[:SECOND], like 04:00)` + calendarExamples
	if err == nil || err.Error() != want {
		t.Fatalf("%v\nwant %s", err, want)
	}
	p, err := Parse("/etc/bm2/s.toml", []byte("name = \"s\"\nscript = \"a.js\"\ncwd = \"/srv/s\"\nport = 3000\nrestart_schedule = \"Mon..Fri 03:30\"\n"), Options{})
	if err != nil || p.RestartSchedule != "Mon..Fri 03:30" {
		t.Fatalf("%v %+v", err, p)
	}
	pub, _ := Marshal(p)
	if !strings.Contains(string(pub), "\nrestart_schedule = \"Mon..Fri 03:30\"\n") {
		t.Fatalf("Marshal:\n%s", pub)
	}
	roundTrip(t, p, 2)
}

// How often an expression may fire within a minute is the number of its
// seconds; the hint gives the seconds their first value.
func TestCalendarPerMinute(t *testing.T) {
	for _, c := range []struct {
		expr string
		n    int
		once string // "" is expr itself
	}{
		{"*:*:*", 60, "*:*:00"},
		{"*-*-* *:*:*", 60, "*-*-* *:*:00"},
		{"*:*:0..59", 60, "*:*:00"},
		{"*:*:0/1", 60, "*:*:00"},
		{"*:*:0/15", 4, "*:*:00"},
		{"*:*:58..59", 2, "*:*:58"},
		{"*:*:05,10", 2, "*:*:05"},
		{"*:*:30,0..1", 3, "*:*:00"},
		{"*:*:0/59", 2, "*:*:00"},
		{"Mon *-*-* 04:00:10/15 UTC", 4, "Mon *-*-* 04:00:10 UTC"},
		{"04:00:*", 60, "04:00:00"},
		{"*:*:00", 1, ""},
		{"*:*:5", 1, ""},
		{"*:*:5,5", 1, ""},
		{"*:*", 1, ""},
		{"*:0/1", 1, ""},
		{"Sun 04:00", 1, ""},
		{"Mon..Fri *-*-* 03:30:00", 1, ""},
		{"*-*-01", 1, ""},
		{"Sat", 1, ""},
		{"minutely", 1, ""},
		{"hourly", 1, ""},
		{"daily UTC", 1, ""},
		{"secondly", 60, ""}, // not taken: nothing is known of it
		{"*:*:*.5", 60, ""},
		{"", 60, ""},
	} {
		if n := CalendarPerMinute(c.expr); n != c.n {
			t.Errorf("CalendarPerMinute(%q) = %d, want %d", c.expr, n, c.n)
		}
		want := c.once
		if want == "" {
			want = c.expr
		}
		once := CalendarOncePerMinute(c.expr)
		if once != want {
			t.Errorf("CalendarOncePerMinute(%q) = %q, want %q", c.expr, once, want)
		}
		if CheckCalendar(c.expr) == nil && (CheckCalendar(once) != nil || CalendarPerMinute(once) != 1) {
			t.Errorf("CalendarOncePerMinute(%q) = %q: %v, %d a minute", c.expr, once, CheckCalendar(once), CalendarPerMinute(once))
		}
	}
}

// systemd agrees: every expression the subset takes that fires twice
// within a minute, by systemd-analyze calendar's next elapses, counts more
// than once a minute here.
func TestCalendarPerMinuteAgreesWithSystemd(t *testing.T) {
	analyze, err := testutil.LookCommand("systemd-analyze")
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no systemd-analyze", Fix: "sudo apt-get install systemd"}, err)
	}
	exprs := generatedCalendars()
	for _, c := range calendarCases {
		exprs = append(exprs, c.expr)
	}
	elapse := regexp.MustCompile(`(?m)^\s*(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC$`)
	often, checked := 0, 0
	for _, expr := range exprs {
		if CheckCalendar(expr) != nil {
			continue
		}
		cmd := exec.Command(analyze, "calendar", "--iterations=4", expr)
		cmd.Env = append(os.Environ(), "TZ=UTC", "SYSTEMD_COLORS=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", expr, err, out)
		}
		var prev time.Time
		fast := false
		for _, m := range elapse.FindAllStringSubmatch(string(out), -1) {
			at, err := time.Parse("2006-01-02 15:04:05", m[1])
			if err != nil {
				t.Fatalf("%q: %v", expr, err)
			}
			if !prev.IsZero() && at.Sub(prev) < time.Minute {
				fast = true
			}
			prev = at
		}
		checked++
		if fast {
			often++
			if n := CalendarPerMinute(expr); n <= 1 {
				t.Errorf("%q fires twice within a minute (systemd-analyze calendar), but counts %d a minute here:\n%s", expr, n, out)
			}
		}
	}
	if often < 10 || checked < 100 {
		t.Fatalf("only %d expressions checked, %d of them more than once a minute: the comparison proves little", checked, often)
	}
	t.Logf("%d expressions taken, %d of them fire more than once a minute", checked, often)
}
