package convert

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/testutil"
)

// cronCases are PM2 cron_restart values and the calendar expressions
// they become, or what their refusal says.
var cronCases = []struct {
	cron, calendar, refused string
}{
	{cron: "0 4 * * 0", calendar: "Sun *-*-* 04:00:00"},
	{cron: "*/15 * * * *", calendar: "*-*-* *:00/15:00"},
	{cron: "0 3 * * *", calendar: "*-*-* 03:00:00"},
	{cron: "* * * * *", calendar: "*-*-* *:*:00"},
	{cron: "30 2 1-7 * *", calendar: "*-*-01..07 02:30:00"},
	{cron: "0 0 1 * *", calendar: "*-*-01 00:00:00"},
	{cron: "0 */6 * * *", calendar: "*-*-* 00/6:00:00"},
	{cron: "0 9-17 * * 1-5", calendar: "Mon..Fri *-*-* 09..17:00:00"},
	{cron: "0,30 * * * *", calendar: "*-*-* *:00,30:00"},
	{cron: "1,2,3,5,7 * * * *", calendar: "*-*-* *:01..03,05,07:00"},
	{cron: "5/20 * * * *", calendar: "*-*-* *:05/20:00"},
	{cron: "10-40/10 * * * *", calendar: "*-*-* *:10..40/10:00"},
	{cron: "50/15 * * * *", calendar: "*-*-* *:50:00"},
	{cron: "0 8-20/4 * * *", calendar: "*-*-* 08/4:00:00"},
	{cron: "0 8-18/4 * * *", calendar: "*-*-* 08..16/4:00:00"},
	{cron: "15 10 * * MON,WED,FRI", calendar: "Mon,Wed,Fri *-*-* 10:15:00"},
	{cron: "0 0 * * 6,0", calendar: "Sat,Sun *-*-* 00:00:00"},
	{cron: "0 0 * * 7", calendar: "Sun *-*-* 00:00:00"},
	{cron: "0 0 * * 5-7", calendar: "Fri..Sun *-*-* 00:00:00"},
	{cron: "0 0 * * 0-2", calendar: "Mon,Tue,Sun *-*-* 00:00:00"},
	{cron: "0 0 * * */2", calendar: "Tue,Thu,Sat,Sun *-*-* 00:00:00"},
	{cron: "0 0 * * 0-6", calendar: "*-*-* 00:00:00"},
	{cron: "0 0 * * sun-sat", calendar: "*-*-* 00:00:00"},
	{cron: "0 0 1 JAN *", calendar: "*-01-01 00:00:00"},
	{cron: "0 0 1 */3 *", calendar: "*-01/3-01 00:00:00"},
	{cron: "0 0 1 jan-mar *", calendar: "*-01..03-01 00:00:00"},
	{cron: "0 0 29 2 *", calendar: "*-02-29 00:00:00"},
	{cron: "0 0 */2 * *", calendar: "*-*-01/2 00:00:00"},
	{cron: "0 4 ? * 0", calendar: "Sun *-*-* 04:00:00"},
	{cron: "  0   4 * *   0 ", calendar: "Sun *-*-* 04:00:00"},
	{cron: "*/10 * * * * *", calendar: "*-*-* *:*:00/10"},
	{cron: "30 0 4 * * *", calendar: "*-*-* 04:00:30"},
	{cron: "0 30 9 * * 1-5", calendar: "Mon..Fri *-*-* 09:30:00"},
	{cron: "@daily", calendar: "*-*-* 00:00:00"},
	{cron: "@midnight", calendar: "*-*-* 00:00:00"},
	{cron: "@weekly", calendar: "Sun *-*-* 00:00:00"},
	{cron: "@hourly", calendar: "*-*-* *:00:00"},
	{cron: "@monthly", calendar: "*-*-01 00:00:00"},
	{cron: "@yearly", calendar: "*-01-01 00:00:00"},
	{cron: "@ANNUALLY", calendar: "*-01-01 00:00:00"},

	{cron: "0 4 1 * 1", refused: "or on the weekdays it names"},
	{cron: "0 4 */2 * 1", refused: "or on the weekdays it names"},
	{cron: "0 4 1-31 * MON", refused: "or on the weekdays it names"},
	{cron: "0 0 L * *", refused: "L, W or #"},
	{cron: "0 0 * * 5L", refused: "L, W or #"},
	{cron: "0 0 * * MON#2", refused: "L, W or #"},
	{cron: "0 0 15W * *", refused: "L, W or #"},
	{cron: "0 4 * *", refused: "it has 4 fields"},
	{cron: "0 4 * * * * *", refused: "it has 7 fields"},
	{cron: "", refused: "it has 0 fields"},
	{cron: "60 * * * *", refused: "the minute 60 is out of range (0-59)"},
	{cron: "0 24 * * *", refused: "the hour 24 is out of range"},
	{cron: "0 0 0 * *", refused: "the day of the month 0 is out of range"},
	{cron: "0 0 * 13 *", refused: "the month 13 is out of range"},
	{cron: "0 0 * * 8", refused: "the weekday 8 is out of range"},
	{cron: "5-1 * * * *", refused: `the minute range "5-1" runs backwards`},
	{cron: "*/0 * * * *", refused: "the step must be a number from 1 to 59"},
	{cron: "x * * * *", refused: `the minute "x" is not a value`},
	{cron: "-5 * * * *", refused: `is not a value`},
	{cron: "@reboot", refused: "@reboot is no time of day"},
}

// Every cron case converts as the table says, and what it converts to
// is a restart_schedule config takes.
func TestCronToCalendar(t *testing.T) {
	for _, c := range cronCases {
		got, err := CronToCalendar(c.cron)
		switch {
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%q: %q, %v; want a refusal saying %q", c.cron, got, err, c.refused)
		case c.refused == "" && (err != nil || got != c.calendar):
			t.Errorf("%q: %q, %v; want %q", c.cron, got, err, c.calendar)
		case c.refused == "":
			if err := config.CheckCalendar(got); err != nil {
				t.Errorf("%q: %q is refused by config: %v", c.cron, got, err)
			}
		}
	}
	if _, err := CronToCalendar("0 4 1 * 1"); !errors.Is(err, ErrCronDays) {
		t.Errorf("day or weekday: %v", err)
	}
}

// cronTimes are the first n times after base (UTC) a cron expression
// fires, by cron's own rule (every field matches; the day fields both,
// as in every expression CronToCalendar converts), found by walking the
// calendar.
func cronTimes(t *testing.T, expr string, base time.Time, n int) []time.Time {
	t.Helper()
	f := strings.Fields(expr)
	if len(f) == 5 {
		f = append([]string{"0"}, f...)
	}
	specs := []cronField{cronSecond, cronMinute, cronHour, cronDay, cronMonth, cronWeekday}
	sets := make([]uint64, 6)
	for i, s := range specs {
		var err error
		if sets[i], err = cronSet(s, f[i]); err != nil {
			t.Fatal(err)
		}
	}
	if sets[5]&(1<<7) != 0 {
		sets[5] |= 1
	}
	var out []time.Time
	for day := base.Truncate(24 * time.Hour); len(out) < n && day.Year() < 2100; day = day.AddDate(0, 0, 1) {
		if sets[4]&(1<<int(day.Month())) == 0 || sets[3]&(1<<day.Day()) == 0 || sets[5]&(1<<int(day.Weekday())) == 0 {
			continue
		}
		for h := 0; h < 24 && len(out) < n; h++ {
			for m := 0; m < 60 && len(out) < n && sets[2]&(1<<h) != 0; m++ {
				for s := 0; s < 60 && len(out) < n && sets[1]&(1<<m) != 0; s++ {
					if at := day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second); sets[0]&(1<<s) != 0 && at.After(base) {
						out = append(out, at)
					}
				}
			}
		}
	}
	return out
}

// What a cron expression becomes fires when cron would have fired it:
// systemd-analyze calendar's next 12 elapses after a base time are cron's
// next 12 times, for every case the table converts. And systemd takes
// every expression CronToCalendar writes.
func TestCronMeansTheSameToSystemd(t *testing.T) {
	analyze, err := testutil.LookCommand("systemd-analyze")
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no systemd-analyze", Fix: "sudo apt-get install systemd"}, err)
	}
	base := time.Date(2026, 1, 30, 23, 59, 30, 0, time.UTC)
	const n = 12
	for _, c := range cronCases {
		if c.refused != "" || strings.HasPrefix(c.cron, "@") {
			continue
		}
		cal, err := CronToCalendar(c.cron)
		if err != nil {
			t.Errorf("%q: %v", c.cron, err)
			continue
		}
		cmd := exec.Command(analyze, "calendar", "--iterations="+strconv.Itoa(n), "--base-time="+base.Format("2006-01-02 15:04:05")+" UTC", cal)
		cmd.Env = append(os.Environ(), "TZ=UTC", "SYSTEMD_COLORS=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%q → %q: systemd-analyze calendar: %v\n%s", c.cron, cal, err, out)
			continue
		}
		var got []string
		for _, line := range strings.Split(string(out), "\n") {
			line = strings.TrimSpace(line)
			if _, v, ok := strings.Cut(line, "Next elapse: "); ok {
				got = append(got, v)
			} else if strings.HasPrefix(line, "Iter. #") {
				_, v, _ := strings.Cut(line, ": ")
				got = append(got, v)
			}
		}
		var want []string
		for _, at := range cronTimes(t, c.cron, base, n) {
			want = append(want, at.Format("Mon 2006-01-02 15:04:05 UTC"))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q → %q:\nsystemd: %s\n   cron: %s", c.cron, cal, strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
}
