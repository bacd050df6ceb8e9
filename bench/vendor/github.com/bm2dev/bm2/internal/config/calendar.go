package config

import (
	"fmt"
	"strconv"
	"strings"
)

// restart_schedule is a systemd calendar expression (systemd.time(7),
// "CALENDAR EVENTS"), the OnCalendar= of the project's restart timer.
// systemd parses it when it loads the timer, long after bm2 serve said
// the file was fine, and a timer whose OnCalendar= it refuses is a timer
// that never runs. So config takes a subset of the grammar that it checks
// exactly, in Go (the generator runs before anything but the file
// system is up, and nothing here may run a program): every expression
// the subset accepts, systemd accepts too, with the same meaning. The
// subset, as bm2.toml(5) documents it:
//
//	[WEEKDAYS] [DATE] [TIME] [UTC]      at least one of the first three
//	minutely hourly daily weekly monthly quarterly semiannually yearly annually  [UTC]
//
// WEEKDAYS is a list of Mon … Sun (or Monday … Sunday, in any case) and
// ranges Mon..Fri; DATE is [YEAR-]MONTH-DAY and TIME HOUR:MINUTE[:SECOND],
// each part "*" or a list of values, ranges a..b and repetitions a/n or
// a..b/n; parts are separated by one space. What systemd takes beyond
// that (the legacy Mon-Fri, "~" for the end of the month, fractions of a
// second, @TIMESTAMP, two-digit years, other time zones, which systemd
// knows only from the host's zoneinfo) is refused with a hint. bm2 check
// also asks systemd-analyze calendar, when it is there, for the next run.

// MaxCalendar is the longest restart_schedule.
const MaxCalendar = 256

// maxCalendarItems bounds the values of one part: systemd refuses more
// than 240.
const maxCalendarItems = 60

// calendarExamples ends every refusal of a calendar expression.
const calendarExamples = `; write it like "Sun 04:00", "Mon..Fri *-*-* 03:30:00", "*-*-01 02:00" or "daily" (bm2.toml(5), restart_schedule)`

// calendarShorthands are the words systemd takes for a whole expression,
// as bm2 takes them: in lower case.
var calendarShorthands = []string{"minutely", "hourly", "daily", "weekly", "monthly", "quarterly", "semiannually", "yearly", "annually"}

// weekdays maps the names systemd knows (lower case) to Monday = 0 …
// Sunday = 6, its order.
var weekdays = map[string]int{
	"mon": 0, "monday": 0, "tue": 1, "tuesday": 1, "wed": 2, "wednesday": 2, "thu": 3, "thursday": 3,
	"fri": 4, "friday": 4, "sat": 5, "saturday": 5, "sun": 6, "sunday": 6,
}

// calendarField is one numeric part of an expression and the values
// systemd takes in it.
type calendarField struct {
	name     string
	from, to int
}

var (
	fieldYear   = calendarField{"year", 1970, 2199}
	fieldMonth  = calendarField{"month", 1, 12}
	fieldDay    = calendarField{"day", 1, 31}
	fieldHour   = calendarField{"hour", 0, 23}
	fieldMinute = calendarField{"minute", 0, 59}
	fieldSecond = calendarField{"second", 0, 59}
)

// CheckCalendar checks a calendar expression against bm2's subset of
// systemd's grammar. It returns nil when the expression is one, else an
// error that says what is wrong and how such expressions are written.
func CheckCalendar(s string) error {
	if msg := calendarProblem(s); msg != "" {
		return fmt.Errorf("%s%s", msg, calendarExamples)
	}
	return nil
}

func calendarProblem(s string) string {
	switch {
	case s == "":
		return "must not be empty (leave the key out for no scheduled restart)"
	case len(s) > MaxCalendar:
		return fmt.Sprintf("is %d bytes long, more than %d", len(s), MaxCalendar)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" *,-./:+_", r)) {
			if r == '~' {
				return fmt.Sprintf("%q: \"~\" (days from the end of the month) is not taken", s)
			}
			if r == '@' {
				return fmt.Sprintf("%q: @TIMESTAMP is not taken", s)
			}
			return fmt.Sprintf("%q: %q has no place in a calendar expression", s, r)
		}
	}
	if strings.TrimSpace(s) != s || strings.Contains(s, "  ") {
		return fmt.Sprintf("%q: separate its parts with one space, and put none around them", s)
	}
	toks := strings.Split(s, " ")
	last := toks[len(toks)-1]
	if last == "UTC" {
		toks = toks[:len(toks)-1]
		if len(toks) == 0 {
			return fmt.Sprintf("%q: a time zone alone is no time", s)
		}
	} else if len(toks) > 1 && zoneLike(last) {
		return fmt.Sprintf("%q: time zone %q is not taken: write the time in UTC (with \" UTC\" at the end) or in the host's local time (no zone)", s, last)
	}
	if isShorthand(toks[0]) {
		switch {
		case toks[0] != strings.ToLower(toks[0]):
			return fmt.Sprintf("%q: write %q in lower case", s, strings.ToLower(toks[0]))
		case len(toks) > 1:
			return fmt.Sprintf("%q: %q stands alone (\" UTC\" may follow it)", s, toks[0])
		}
		return ""
	}
	i := 0
	if isLetter(toks[0][0]) {
		if msg := checkWeekdays(toks[0]); msg != "" {
			return fmt.Sprintf("%q: %s", s, msg)
		}
		i++
	}
	seenDate, seenTime := false, false
	for _, tok := range toks[i:] {
		var msg string
		switch {
		case isShorthand(tok):
			msg = fmt.Sprintf("%q stands alone (\" UTC\" may follow it)", tok)
		case isLetter(tok[0]):
			msg = fmt.Sprintf("%q comes after the date or time: weekdays come first", tok)
		case seenTime:
			msg = fmt.Sprintf("%q comes after the time, which is last", tok)
		case strings.Contains(tok, ":"):
			seenTime = true
			msg = checkTime(tok)
		case strings.Contains(tok, "-"):
			if seenDate {
				msg = fmt.Sprintf("%q: a second date", tok)
				break
			}
			seenDate = true
			msg = checkDate(tok)
		default:
			msg = fmt.Sprintf("%q is neither a date ([YEAR-]MONTH-DAY, like *-*-01) nor a time (HOUR:MINUTE[:SECOND], like 04:00)", tok)
		}
		if msg != "" {
			return fmt.Sprintf("%q: %s", s, msg)
		}
	}
	return ""
}

func isShorthand(w string) bool {
	for _, sh := range calendarShorthands {
		if strings.EqualFold(w, sh) {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// zoneLike tells a last word that names a time zone other than UTC:
// "Europe/Berlin", "CET", "utc", "+0200".
func zoneLike(w string) bool {
	if strings.Contains(w, "/") && isLetter(w[0]) || w[0] == '+' || strings.EqualFold(w, "UTC") {
		return true
	}
	for i := 0; i < len(w); i++ {
		if !isLetter(w[i]) {
			return false
		}
	}
	_, day := weekdays[strings.ToLower(w)]
	return !day && !isShorthand(w)
}

// checkWeekdays checks a list of weekdays and ranges of them.
func checkWeekdays(tok string) string {
	items := strings.Split(tok, ",")
	if len(items) > maxCalendarItems {
		return fmt.Sprintf("%q lists %d weekdays, more than %d", tok, len(items), maxCalendarItems)
	}
	for _, item := range items {
		if item == "" {
			return fmt.Sprintf("%q has an empty item: write the days with one comma between them", tok)
		}
		if strings.Contains(item, "-") {
			return fmt.Sprintf("%q: write a range of weekdays with \"..\", like Mon..Fri", item)
		}
		first, second, isRange := strings.Cut(item, "..")
		a, ok := weekdays[strings.ToLower(first)]
		if !ok {
			return fmt.Sprintf("%q is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun, or the whole name)", first)
		}
		if !isRange {
			continue
		}
		b, ok := weekdays[strings.ToLower(second)]
		if !ok {
			return fmt.Sprintf("%q is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun, or the whole name)", second)
		}
		if a > b {
			return fmt.Sprintf("%q: a range of weekdays runs from Monday towards Sunday (write %s..Sun,Mon..%s)", item, first, second)
		}
	}
	return ""
}

// checkDate checks [YEAR-]MONTH-DAY.
func checkDate(tok string) string {
	parts := strings.Split(tok, "-")
	fields := []calendarField{fieldYear, fieldMonth, fieldDay}
	switch len(parts) {
	case 2:
		fields = fields[1:]
	case 3:
	default:
		return fmt.Sprintf("%q is not a date: write [YEAR-]MONTH-DAY, like 2026-12-24, *-12-24 or *-*-01", tok)
	}
	for k, part := range parts {
		if msg := checkChain(fields[k], part); msg != "" {
			return msg
		}
	}
	return ""
}

// checkTime checks HOUR:MINUTE[:SECOND].
func checkTime(tok string) string {
	parts := strings.Split(tok, ":")
	if len(parts) != 2 && len(parts) != 3 {
		return fmt.Sprintf("%q is not a time: write HOUR:MINUTE[:SECOND], like 04:00, 04:30:15 or *:00/15", tok)
	}
	fields := []calendarField{fieldHour, fieldMinute, fieldSecond}
	for k, part := range parts {
		if msg := checkChain(fields[k], part); msg != "" {
			return msg
		}
	}
	return ""
}

// checkChain checks one part: "*", or a list of values, ranges a..b and
// repetitions a/n and a..b/n, with systemd's rules (calendarspec.c's
// chain_valid) made strict where its versions differ: a range goes up,
// and a repetition fires at least twice.
func checkChain(f calendarField, part string) string {
	if part == "*" {
		return ""
	}
	if part == "" {
		return fmt.Sprintf("the %s is empty: write * for any", f.name)
	}
	items := strings.Split(part, ",")
	if len(items) > maxCalendarItems {
		return fmt.Sprintf("the %s %q lists %d values, more than %d", f.name, part, len(items), maxCalendarItems)
	}
	span := fmt.Sprintf("%d-%d", f.from, f.to)
	for _, item := range items {
		if item == "*" {
			return fmt.Sprintf("the %s %q: * stands alone (it is every %s already)", f.name, part, f.name)
		}
		if strings.HasPrefix(item, "*/") {
			return fmt.Sprintf("the %s %q: a repetition starts at a value, like %02d/%s (systemd does not take */N)", f.name, item, f.from, item[2:])
		}
		base, rep, hasRep := strings.Cut(item, "/")
		lo, hi, isRange := strings.Cut(base, "..")
		start, ok := calendarNumber(f, lo)
		if !ok {
			return numberProblem(f, item, lo)
		}
		if start < f.from || start > f.to {
			return fmt.Sprintf("the %s %d is out of range (%s)", f.name, start, span)
		}
		stop := -1
		if isRange {
			if stop, ok = calendarNumber(f, hi); !ok {
				return numberProblem(f, item, hi)
			}
			if stop < f.from || stop > f.to {
				return fmt.Sprintf("the %s %d is out of range (%s)", f.name, stop, span)
			}
			if stop <= start {
				return fmt.Sprintf("the %s range %q must go up: write it from the lower value to the higher", f.name, item)
			}
		}
		if !hasRep {
			continue
		}
		n, ok := digits(rep)
		switch {
		case !ok:
			return fmt.Sprintf("the %s %q: repeat every N, a whole number", f.name, item)
		case n == 0:
			return fmt.Sprintf("the %s %q: repeating every 0 is no repetition", f.name, item)
		case n > f.to-f.from:
			return fmt.Sprintf("the %s %q repeats every %d, more than the %s's whole range (%s)", f.name, item, n, f.name, span)
		case isRange && start+n > stop:
			return fmt.Sprintf("the %s %q repeats every %d, longer than its range: write %d alone", f.name, item, n, start)
		case !isRange && start+n > f.to:
			return fmt.Sprintf("the %s %q repeats every %d from %d, past %d: write %d alone", f.name, item, n, start, f.to, start)
		}
	}
	return ""
}

// CalendarPerMinute is how many times at most a calendar expression that
// CheckCalendar takes fires within one minute: the number of values its
// seconds take (each time it fires, the minute it fires in is one its
// other parts name, and within it only the seconds vary). A shorthand
// (minutely is second 0; the others are coarser), a time without seconds
// (04:00 is 04:00:00) and no time at all (00:00:00) fire once; "*:*:*"
// fires 60 times, every second. An expression CheckCalendar refuses
// counts as 60: nothing about it is known.
func CalendarPerMinute(s string) int {
	sec, ok := calendarSeconds(s)
	if !ok {
		return 60
	}
	if sec < 0 {
		return 1
	}
	toks := strings.Split(s, " ")
	part := strings.Split(toks[sec], ":")[2]
	if part == "*" {
		return 60
	}
	var at [60]bool
	n := 0
	for _, item := range strings.Split(part, ",") {
		base, rep, hasRep := strings.Cut(item, "/")
		lo, hi, isRange := strings.Cut(base, "..")
		start, _ := calendarNumber(fieldSecond, lo)
		stop, step := fieldSecond.to, 1
		switch {
		case isRange:
			stop, _ = calendarNumber(fieldSecond, hi)
		case !hasRep:
			stop = start
		}
		if hasRep {
			step, _ = digits(rep)
		}
		for v := start; v <= stop && v < len(at); v += max(step, 1) {
			if !at[v] {
				at[v] = true
				n++
			}
		}
	}
	return max(n, 1)
}

// CalendarOncePerMinute is s with its seconds made one value, the first
// they name ("*:*:*" is "*:*:00", "Mon 04:00:10/15" is "Mon 04:00:10"):
// what a hint suggests for an expression that fires more often. s
// itself when it fires once a minute at most already, or is not taken.
func CalendarOncePerMinute(s string) string {
	sec, ok := calendarSeconds(s)
	if !ok || sec < 0 || CalendarPerMinute(s) == 1 {
		return s
	}
	toks := strings.Split(s, " ")
	parts := strings.Split(toks[sec], ":")
	first := fieldSecond.to
	if parts[2] == "*" {
		first = fieldSecond.from
	}
	for _, item := range strings.Split(parts[2], ",") {
		lo, _, _ := strings.Cut(strings.SplitN(item, "/", 2)[0], "..")
		if v, ok := calendarNumber(fieldSecond, lo); ok {
			first = min(first, v)
		}
	}
	parts[2] = fmt.Sprintf("%02d", first)
	toks[sec] = strings.Join(parts, ":")
	return strings.Join(toks, " ")
}

// calendarSeconds finds the seconds of an expression CheckCalendar
// takes: the index of its word HOUR:MINUTE:SECOND, or -1 when it has none
// (a shorthand, a time without seconds, no time); ok is false when
// CheckCalendar refuses it.
func calendarSeconds(s string) (int, bool) {
	if CheckCalendar(s) != nil {
		return 0, false
	}
	for i, tok := range strings.Split(s, " ") {
		if strings.Count(tok, ":") == 2 {
			return i, true
		}
	}
	return -1, true
}

// calendarNumber reads a value of f: 1 to 4 digits, a year 4.
func calendarNumber(f calendarField, s string) (int, bool) {
	if f == fieldYear && len(s) != 4 {
		return 0, false // systemd reads 26 as 2026 and 70 as 1970: bm2 wants it said
	}
	return digits(s)
}

// digits reads 1 to 4 decimal digits.
func digits(s string) (int, bool) {
	if s == "" || len(s) > 4 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func numberProblem(f calendarField, item, s string) string {
	switch {
	case f == fieldYear && s != "" && strings.Trim(s, "0123456789") == "" && len(s) < 4:
		return fmt.Sprintf("the year %q: write it in full, with 4 digits", s)
	case f == fieldSecond && strings.Contains(s, "."):
		return fmt.Sprintf("the second %q: fractions of a second are not taken", item)
	case strings.Contains(s, "."):
		return fmt.Sprintf("the %s %q: a range is written a..b", f.name, item)
	}
	return fmt.Sprintf("the %s %q is not a value, a range a..b or a repetition a/n", f.name, item)
}
