package convert

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
)

// PM2's cron_restart is a cron expression, read by croner (PM2 5.3 and
// later): five fields, minute hour day-of-month month day-of-week, or six
// with the seconds first; each "*" (or "?"), a value, a range a-b, a list
// a,b and steps */n, a/n and a-b/n; months and weekdays also by name
// (JAN, SUN), Sunday also 7; and the nicknames @yearly … @hourly.
// CronToCalendar turns one into the systemd calendar expression of
// restart_schedule, field by field, in systemd's normalized form:
//
//	0 4 * * 0       Sun *-*-* 04:00:00
//	*/15 * * * *    *-*-* *:00/15:00
//	30 2 1-7 * *    *-*-01..07 02:30:00
//
// What a calendar expression cannot say is refused: cron's L, W and #,
// and a day of the month and a weekday both restricted, which cron (and
// croner) fire on when either matches, where systemd's calendar wants
// both (ErrCronDays).

// ErrCronDays is a cron expression with both a day of the month and a
// weekday: cron runs it when either matches, which no one calendar
// expression says.
var ErrCronDays = errors.New("cron restarts on the days of the month it names or on the weekdays it names, and one systemd calendar expression cannot say \"or\"")

// cronField is one field of a cron expression and its values.
type cronField struct {
	name   string
	lo, hi int
	names  []string // by value, from lo: JAN… or SUN…
}

var (
	cronSecond  = cronField{name: "second", lo: 0, hi: 59}
	cronMinute  = cronField{name: "minute", lo: 0, hi: 59}
	cronHour    = cronField{name: "hour", lo: 0, hi: 23}
	cronDay     = cronField{name: "day of the month", lo: 1, hi: 31}
	cronMonth   = cronField{name: "month", lo: 1, hi: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}}
	cronWeekday = cronField{name: "weekday", lo: 0, hi: 7, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}}
)

// cronNicknames are croner's @ words, as calendar expressions (cron's
// week starts on Sunday, systemd's "weekly" on Monday).
var cronNicknames = map[string]string{
	"@yearly":   "*-01-01 00:00:00",
	"@annually": "*-01-01 00:00:00",
	"@monthly":  "*-*-01 00:00:00",
	"@weekly":   "Sun *-*-* 00:00:00",
	"@daily":    "*-*-* 00:00:00",
	"@midnight": "*-*-* 00:00:00",
	"@hourly":   "*-*-* *:00:00",
}

// calendarWeekdays are systemd's weekday names by cron's numbers.
var calendarWeekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// CronToCalendar converts a cron expression to a systemd calendar
// expression that config's subset takes (see above).
func CronToCalendar(expr string) (string, error) { return convertCron(expr, false) }

// convertCron is CronToCalendar; both renders an expression whose day
// fields are both set as systemd reads it, days that match both.
func convertCron(expr string, both bool) (string, error) {
	fields := strings.Fields(expr)
	if len(fields) == 1 && strings.HasPrefix(fields[0], "@") {
		if cal, ok := cronNicknames[strings.ToLower(fields[0])]; ok {
			return cal, nil
		}
		return "", fmt.Errorf("%s is no time of day", fields[0])
	}
	switch len(fields) {
	case 5:
		fields = append([]string{"0"}, fields...)
	case 6:
	default:
		return "", fmt.Errorf("it has %d fields: cron has 5 (minute hour day-of-month month weekday), or 6 with the seconds first", len(fields))
	}
	specs := []cronField{cronSecond, cronMinute, cronHour, cronDay, cronMonth, cronWeekday}
	sets := make([]uint64, len(specs))
	for i, f := range specs {
		set, err := cronSet(f, fields[i])
		if err != nil {
			return "", err
		}
		sets[i] = set
	}
	sec, min, hour, day, month, wday := sets[0], sets[1], sets[2], sets[3], sets[4], sets[5]
	if wday&(1<<7) != 0 { // 7 is Sunday too
		wday = wday&^(1<<7) | 1
	}
	domSet, dowSet := !cronStar(fields[3]), !cronStar(fields[5])
	if domSet && dowSet && !both {
		return "", ErrCronDays
	}
	var b strings.Builder
	if dowSet && wday != 1<<7-1 {
		b.WriteString(weekdayList(wday))
		b.WriteByte(' ')
	}
	b.WriteString("*-" + calendarChain(cronMonth, month) + "-" + calendarChain(cronDay, day) + " ")
	b.WriteString(calendarChain(cronHour, hour) + ":" + calendarChain(cronMinute, min) + ":" + calendarChain(cronSecond, sec))
	cal := b.String()
	if err := config.CheckCalendar(cal); err != nil {
		return "", fmt.Errorf("internal error: it converts to %q, which bm2 does not take: %v", cal, err)
	}
	return cal, nil
}

// cronStar tells a field that restricts nothing, as croner reads "or"
// between the day fields: "*" or "?".
func cronStar(s string) bool { return s == "*" || s == "?" }

// cronSet reads one field into the set of its values (bit v for value v).
func cronSet(f cronField, s string) (uint64, error) {
	if strings.Contains(s, "#") {
		return 0, lwError(f, s)
	}
	var set uint64
	for _, item := range strings.Split(s, ",") {
		base, stepText, hasStep := strings.Cut(item, "/")
		lo, hi := f.lo, f.hi
		switch {
		case base == "*" || base == "?":
			if f.hi == 7 { // the weekday
				hi = 6 // 0-7 would count Sunday twice: the same set
			}
		case strings.Contains(base, "-"):
			a, b, _ := strings.Cut(base, "-")
			var err error
			if lo, err = cronValue(f, a); err != nil {
				return 0, err
			}
			if hi, err = cronValue(f, b); err != nil {
				return 0, err
			}
			if lo > hi {
				return 0, fmt.Errorf("the %s range %q runs backwards", f.name, base)
			}
		default:
			v, err := cronValue(f, base)
			if err != nil {
				return 0, err
			}
			lo = v
			if !hasStep {
				hi = v
			}
		}
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 || n > f.hi {
				return 0, fmt.Errorf("the %s %q: the step must be a number from 1 to %d", f.name, item, f.hi)
			}
			step = n
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << v
		}
	}
	return set, nil
}

// cronValue reads a value of f: a number in its range or, for months and
// weekdays, a name.
func cronValue(f cronField, s string) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.lo + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil && strings.ContainsAny(strings.ToUpper(s), "LW") {
		return 0, lwError(f, s)
	}
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("the %s %q is not a value", f.name, s)
	}
	if v < f.lo || v > f.hi {
		return 0, fmt.Errorf("the %s %d is out of range (%d-%d)", f.name, v, f.lo, f.hi)
	}
	return v, nil
}

// lwError refuses cron's L (last), W (nearest weekday) and # (nth
// weekday of the month).
func lwError(f cronField, s string) error {
	return fmt.Errorf("the %s %q uses cron's L, W or #, which a systemd calendar expression cannot say", f.name, s)
}

// calendarChain renders a set of values of f as one part of a calendar
// expression: "*" for all of them, a/n or a..b/n for a step of three
// values or more, else a list of values and ranges a..b of three or more.
func calendarChain(f cronField, set uint64) string {
	var vals []int
	for v := f.lo; v <= f.hi; v++ {
		if set&(1<<v) != 0 {
			vals = append(vals, v)
		}
	}
	if len(vals) == f.hi-f.lo+1 {
		return "*"
	}
	two := func(v int) string { return fmt.Sprintf("%02d", v) }
	if n := len(vals); n >= 3 {
		step := vals[1] - vals[0]
		even := step > 1
		for i := 2; i < n && even; i++ {
			even = vals[i]-vals[i-1] == step
		}
		if even {
			if vals[n-1]+step > f.hi {
				return two(vals[0]) + "/" + strconv.Itoa(step)
			}
			return two(vals[0]) + ".." + two(vals[n-1]) + "/" + strconv.Itoa(step)
		}
	}
	var parts []string
	for i := 0; i < len(vals); {
		j := i
		for j+1 < len(vals) && vals[j+1] == vals[j]+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, two(vals[i])+".."+two(vals[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, two(vals[k]))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// weekdayList renders a set of weekdays (bit 0 Sunday … 6 Saturday) in
// systemd's order, Monday first: runs of three days or more as ranges.
func weekdayList(set uint64) string {
	// Monday = 0 … Sunday = 6, as systemd counts.
	var days [7]bool
	for c := 0; c < 7; c++ {
		days[(c+6)%7] = set&(1<<c) != 0
	}
	name := func(d int) string { return calendarWeekdays[(d+1)%7] }
	var parts []string
	for i := 0; i < 7; {
		if !days[i] {
			i++
			continue
		}
		j := i
		for j+1 < 7 && days[j+1] {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, name(i)+".."+name(j))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, name(k))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// cronDaysApart is what a cron expression with both day fields set can
// become: a calendar expression for its days of the month alone, one for
// its weekdays alone, and one for the days that are both.
func cronDaysApart(expr string) (byDay, byWeekday, both string) {
	f := strings.Fields(expr)
	dom, dow := len(f)-3, len(f)-1
	a, b := append([]string(nil), f...), append([]string(nil), f...)
	a[dow], b[dom] = "*", "*"
	byDay, _ = CronToCalendar(strings.Join(a, " "))
	byWeekday, _ = CronToCalendar(strings.Join(b, " "))
	both, _ = convertCron(expr, true)
	return byDay, byWeekday, both
}
