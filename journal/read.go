package journal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/safefs"
)

// Query selects journal entries the way journalctl's command line does;
// [Read] runs it.
type Query struct {
	// Units are units whose messages are wanted (journalctl -u UNIT, for
	// each): what their processes logged and what systemd logged about them.
	Units []string
	// NoManager leaves out of Units' messages what the service manager
	// logged about them ("Started ...", "Main process exited ...": the
	// _PID=1 UNIT= part of journalctl -u): what their processes logged,
	// what root (the user, in user scope) logged about them
	// (OBJECT_SYSTEMD_UNIT=) and their core dumps remain.
	NoManager bool
	// Matches are FIELD=VALUE matches: values of one field are alternatives,
	// different fields must all match (journalctl's rules).
	Matches []string
	// Or are further groups of FIELD=VALUE matches, each an alternative to
	// Matches: an entry is selected when it matches Matches, or every
	// match of one group (journalctl's "+"). Not with Units or BM2.
	Or [][]string
	// Since is journalctl's --since: a time as journalctl understands it
	// ("10 min ago", "2026-11-30 04:00", "@1764475200.5"); "" for no limit.
	Since string
	// Lines is journalctl's -n: only the last that many entries; 0 for all.
	Lines int
	// Follow is journalctl's -f: after the existing entries, wait for new
	// ones until ctx ends.
	Follow bool
	// Grep is journalctl's --grep: only entries whose MESSAGE matches this
	// PCRE2 pattern (case-insensitive when it has no capital letter); ""
	// for all. Lines counts matching entries (see [Read]).
	Grep string
	// AfterCursor is journalctl's --after-cursor: only entries after the
	// one with this __CURSOR; "" for no such limit.
	AfterCursor string
	// Fields is journalctl's --output-fields: only these fields of each
	// entry (and those journalctl always prints: __CURSOR,
	// __REALTIME_TIMESTAMP, __MONOTONIC_TIMESTAMP, _BOOT_ID); nil for all.
	// Not for BM2 queries, whose entries are judged by their fields.
	Fields []string
	// BM2 restricts the query to entries bm2 wrote itself ([Trusted]), in
	// the query itself, so that entries an app logs cannot crowd bm2's out
	// of the last Lines. Messages of the generator are included when
	// Generator is set too.
	BM2, Generator bool
	// User is the UID, in decimal, of a user-scope reader ("" in system
	// scope): Units are that user's units (journalctl --user-unit), bm2's
	// own entries are the ones that user's processes wrote (the user's
	// manager runs bm2-probe as the user), and every entry must carry
	// _UID=User, so that another user's entries never show, whatever
	// the reader may read.
	User string
}

// trustedUID is whose entries the query believes to be bm2's.
func (q Query) trustedUID() string {
	if q.User != "" {
		return q.User
	}
	return "0"
}

// EventQuery selects bm2's events of the given kinds for the given
// projects (all when empty).
func EventQuery(projects []string, kinds ...Kind) Query {
	q := Query{BM2: true}
	for _, p := range projects {
		q.Matches = append(q.Matches, FieldProject+"="+p)
	}
	for _, k := range kinds {
		q.Matches = append(q.Matches, FieldEvent+"="+string(k))
	}
	return q
}

// Args renders the query as journalctl arguments (JSON output, no pager).
func (q Query) Args() []string {
	args := []string{"--no-pager", "-o", "json"}
	unitFlag := "-u"
	if q.User != "" {
		unitFlag = "--user-unit"
	}
	if !q.NoManager {
		for _, u := range q.Units {
			args = append(args, unitFlag, u)
		}
	}
	if q.Since != "" {
		args = append(args, "--since", q.Since)
	}
	if q.AfterCursor != "" {
		args = append(args, "--after-cursor="+q.AfterCursor)
	}
	if q.Lines > 0 {
		args = append(args, "-n", strconv.Itoa(q.Lines))
	}
	if q.newestFirst() {
		// What journalctl 252 does anyway for --grep with -n (it searches
		// backwards for the last matches); said, so that every version
		// prints the same order, which Read turns around.
		args = append(args, "-r")
	}
	if q.Follow {
		args = append(args, "-f")
		if q.Lines == 0 {
			// Without -n or --since, journalctl -f starts with the last
			// 10 entries, not all of them.
			args = append(args, "--no-tail")
		}
	}
	if len(q.Fields) > 0 && !q.BM2 {
		fields := q.Fields
		if q.User != "" && !slices.Contains(fields, FieldUID) {
			fields = append(slices.Clip(fields), FieldUID) // Read checks whose each entry is
		}
		args = append(args, "--output-fields="+strings.Join(fields, ","))
	}
	if q.Grep != "" {
		// One argument, so that a pattern that starts with "-" is the
		// pattern, not an option.
		args = append(args, "--grep="+q.Grep)
	}
	if !q.BM2 {
		return append(args, q.matchArgs()...)
	}
	// journalctl ORs groups separated by "+": root's own entries (or the
	// user's), and, for the system generator, the kernel log.
	args = append(args, FieldIdentifier+"="+Identifier, FieldUID+"="+q.trustedUID())
	args = append(args, q.Matches...)
	if q.Generator && q.User == "" {
		args = append(args, "+", FieldIdentifier+"="+Identifier, FieldTransport+"=kernel")
		args = append(args, q.Matches...)
	}
	return args
}

// CoredumpMessageID is the MESSAGE_ID of systemd-coredump's entries.
const CoredumpMessageID = "fc2e22bc6ee647b6b90729ab34a250b1"

// matchArgs are the matches of a query that is not BM2's: Matches and
// each group of Or, separated by "+"; with NoManager, the groups that
// select Units' entries but the manager's, each with Matches. In user
// scope every group carries _UID=User.
func (q Query) matchArgs() []string {
	groups := [][]string{q.Matches}
	if q.NoManager && len(q.Units) > 0 {
		var own, about, cores []string
		for _, u := range q.Units {
			if q.User != "" {
				own = append(own, "_SYSTEMD_USER_UNIT="+u)
				about = append(about, FieldObjectUserUnit+"="+u)
			} else {
				own = append(own, "_SYSTEMD_UNIT="+u)
				about = append(about, FieldObjectUnit+"="+u)
				cores = append(cores, "COREDUMP_UNIT="+u)
			}
		}
		trusted := FieldUID + "=" + q.trustedUID()
		groups = [][]string{slices.Concat(own, q.Matches), slices.Concat([]string{trusted}, about, q.Matches)}
		if cores != nil {
			// As journalctl -u has them: systemd-coredump runs as root.
			groups = append(groups, slices.Concat([]string{FieldMessageID + "=" + CoredumpMessageID, trusted}, cores, q.Matches))
		}
	}
	groups = append(groups, q.Or...)
	var args []string
	for k, g := range groups {
		if len(g) == 0 {
			continue
		}
		if k > 0 && len(args) > 0 {
			args = append(args, "+")
		}
		if q.User != "" && !slices.Contains(g, FieldUID+"="+q.User) {
			args = append(args, FieldUID+"="+q.User)
		}
		args = append(args, g...)
	}
	return args
}

// newestFirst tells whether journalctl is asked for the query's entries
// newest first: the last Lines entries that match Grep, without -f.
func (q Query) newestFirst() bool { return q.Grep != "" && q.Lines > 0 && !q.Follow }

// SinceTime renders t for Query.Since, to the microsecond.
func SinceTime(t time.Time) string {
	us := t.UnixMicro()
	return fmt.Sprintf("@%d.%06d", us/1e6, us%1e6)
}

// ParseEntry decodes one line of journalctl -o json. Values are strings,
// arrays of bytes (binary data) or arrays of either (a field that appears
// more than once; the first value is kept).
func ParseEntry(line []byte) (Entry, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, err
	}
	e := make(Entry, len(raw))
	for k, v := range raw {
		if s, ok := jsonValue(v); ok {
			e[k] = s
		}
	}
	return e, nil
}

func jsonValue(v json.RawMessage) (string, bool) {
	if string(v) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var bs []byte
	var nums []int
	if json.Unmarshal(v, &nums) == nil {
		for _, n := range nums {
			bs = append(bs, byte(n))
		}
		return string(bs), true
	}
	var many []json.RawMessage
	if json.Unmarshal(v, &many) == nil && len(many) > 0 {
		return jsonValue(many[0])
	}
	return "", false
}

// ErrRestricted means journalctl ran but could not open the system
// journal: the caller is not root nor in the adm or systemd-journal group.
var ErrRestricted = errors.New("this user cannot read the system journal")

// RestrictedHint is what to do about ErrRestricted.
const RestrictedHint = "run it as root, or add yourself to the adm or systemd-journal group"

// ErrNoJournalctl means journalctl could not be started.
var ErrNoJournalctl = errors.New("journalctl could not be run")

// ErrPattern means journalctl refused a query's Grep pattern: not valid
// PCRE2, or a journalctl without PCRE2 (libpcre2-8).
var ErrPattern = errors.New("journalctl refused the pattern")

// FieldCursor is the field of an entry that journalctl's --after-cursor
// takes.
const FieldCursor = "__CURSOR"

// Read runs journalctl and calls each for every entry, oldest first, as
// it arrives. A query that does not follow is bounded to 30 s. When each
// returns an error, reading stops and that error is returned. Entries of
// a BM2 query that are not [Trusted] are dropped here as well.
//
// With Grep, Lines counts matching entries, with Follow too (journalctl
// -f would apply -n before the pattern): the last Lines matches are read
// first, then journalctl follows from the newest of them, so that no
// entry is shown twice or missed between the two. A pattern that matches
// nothing is no error (journalctl exits 1 for it, as grep does).
func Read(ctx context.Context, q Query, each func(Entry) error) error {
	switch {
	case q.newestFirst():
		var got []Entry
		if err := read(ctx, q, func(e Entry) error { got = append(got, e); return nil }); err != nil {
			return err
		}
		for i := len(got) - 1; i >= 0; i-- {
			if err := each(got[i]); err != nil {
				return err
			}
		}
		return nil
	case q.Grep != "" && q.Lines > 0 && q.Follow:
		start := time.Now()
		// Where to follow from when nothing matches yet: the newest entry
		// of the query without its pattern, taken before the matches are.
		base := q
		base.Grep, base.Lines, base.Follow = "", 1, false
		mark := ""
		if err := read(ctx, base, func(e Entry) error { mark = e[FieldCursor]; return nil }); err != nil {
			return err
		}
		past := q
		past.Follow = false
		if err := Read(ctx, past, func(e Entry) error {
			if c := e[FieldCursor]; c != "" {
				mark = c
			}
			return each(e)
		}); err != nil {
			return err
		}
		next := q
		next.Lines = 0
		if mark != "" {
			next.AfterCursor, next.Since = mark, ""
		} else {
			next.Since = SinceTime(start)
		}
		return read(ctx, next, each)
	}
	return read(ctx, q, each)
}

// read is one run of journalctl for q, its entries in journalctl's order.
func read(ctx context.Context, q Query, each func(Entry) error) error {
	if !q.Follow {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	args := q.Args()
	cmd := exec.CommandContext(ctx, "journalctl", args...)
	stderr := safefs.Capped{Max: 8 << 10}
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("journalctl: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: %v", ErrNoJournalctl, err)
	}
	var cbErr error
	seen, received := false, false
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // "-- No entries --" and the like
		}
		received = true
		e, err := ParseEntry(line)
		if err != nil || (q.BM2 && !TrustedFrom(e, q.trustedUID())) || (q.User != "" && e[FieldUID] != q.User) {
			continue
		}
		seen = true
		if cbErr = each(e); cbErr != nil {
			break
		}
	}
	if cbErr != nil || sc.Err() != nil {
		_ = cmd.Process.Kill()
		_, _ = io.Copy(io.Discard, out)
	}
	werr := cmd.Wait()
	var exit *exec.ExitError
	if q.Grep != "" && !received && errors.As(werr, &exit) && exit.ExitCode() == 1 && noMatchNoise(stderr.String()) {
		werr = nil // the pattern matched nothing
	}
	switch {
	case cbErr != nil:
		return cbErr
	case ctx.Err() != nil:
		return ctx.Err()
	case sc.Err() != nil:
		return fmt.Errorf("read journalctl's output: %w", sc.Err())
	case werr != nil && strings.Contains(stderr.String(), "insufficient permissions") && q.User != "" && Volatile() && !journalReader():
		return ErrUserVolatile
	case werr != nil && strings.Contains(stderr.String(), "insufficient permissions"):
		return ErrRestricted
	case werr != nil:
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = werr.Error()
		}
		if l := strings.ToLower(msg); q.Grep != "" && !received && (strings.Contains(l, "pattern") || strings.Contains(l, "pcre")) {
			return fmt.Errorf("%w %q: %s", ErrPattern, q.Grep, msg)
		}
		return fmt.Errorf("journalctl %s: %s", strings.Join(args, " "), msg)
	}
	s := stderr.String()
	if q.User != "" {
		// Not seeing other users' messages is the point of user scope.
		if !seen && Volatile() && !journalReader() {
			return ErrUserVolatile
		}
		return nil
	}
	if strings.Contains(s, "not seeing messages from other users") || strings.Contains(s, "insufficient permissions") {
		return ErrRestricted
	}
	return nil
}

// noMatchNoise tells whether what journalctl wrote on stderr is only what
// it may say on a run that found nothing: it exits 1 without a word when
// --grep matched nothing, and with its error when it failed (a bad
// pattern, a journal it cannot open), which is not to be taken for an
// empty result.
func noMatchNoise(stderr string) bool {
	hint := false
	for _, raw := range strings.Split(stderr, "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "":
		case strings.HasPrefix(line, "Hint:"):
			hint = true // "not seeing messages from other users", indented lines after it
		case hint && (raw[0] == ' ' || raw[0] == '\t'):
		case strings.Contains(line, "No journal files were found"), line == "-- No entries --":
			hint = false
		default:
			return false
		}
	}
	return true
}

// ErrUserVolatile means a user-scope reader found nothing in a journal
// kept in memory only: journald splits entries per user only in
// persistent storage (/var/log/journal), so a user's services log into the
// system journal, which a user outside the adm and systemd-journal groups
// cannot read.
var ErrUserVolatile = errors.New("this host keeps its journal in memory only (/run/log/journal; there is no /var/log/journal): " +
	"there, the entries of your services are in the system journal, which only root and the groups adm and systemd-journal can read")

// UserVolatileHint is what to do about ErrUserVolatile.
const UserVolatileHint = "ask an administrator for a persistent journal (sudo mkdir -p /var/log/journal && sudo systemctl restart systemd-journald) " +
	"or to add you to the systemd-journal group (sudo usermod -aG systemd-journal $USER, then log in again)"

// journalReader tells whether this process may read the whole journal
// (a member of adm or systemd-journal).
func journalReader() bool {
	groups, err := os.Getgroups()
	if err != nil {
		return false
	}
	for _, name := range []string{"adm", "systemd-journal"} {
		g, err := user.LookupGroup(name)
		if err != nil {
			continue
		}
		for _, gid := range append(groups, os.Getegid()) {
			if strconv.Itoa(gid) == g.Gid {
				return true
			}
		}
	}
	return false
}

// PersistentDir is where journald keeps a persistent journal.
var PersistentDir = "/var/log/journal"

// Volatile tells whether journald keeps its journal in memory only
// (Storage=volatile or none in journald.conf or its drop-ins, or
// Storage=auto without /var/log/journal).
func Volatile() bool {
	switch storage(JournaldConfigs) {
	case "volatile", "none":
		return true
	case "persistent":
		return false
	}
	st, err := os.Stat(PersistentDir)
	return err != nil || !st.IsDir()
}

// JournaldConfigs are journald's configuration files, in the order
// journald reads them (the main file, then drop-ins; later ones win).
var JournaldConfigs = func() []string {
	files := []string{"/etc/systemd/journald.conf"}
	for _, dir := range []string{"/usr/lib/systemd/journald.conf.d", "/etc/systemd/journald.conf.d", "/run/systemd/journald.conf.d"} {
		matches, _ := filepath.Glob(filepath.Join(dir, "*.conf"))
		files = append(files, matches...)
	}
	return files
}

// storage is the last Storage= of journald's [Journal] section in files
// ("auto" when none sets it).
func storage(files func() []string) string {
	value := "auto"
	for _, f := range files() {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		section := ""
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(line, "["):
				section = line
			case section == "[Journal]" && strings.HasPrefix(line, "Storage="):
				value = strings.TrimSpace(strings.TrimPrefix(line, "Storage="))
			}
		}
	}
	return value
}

// ReadEvents returns the decoded events a query selects, logged at or
// after since (exactly: journalctl's --since is coarser).
func ReadEvents(ctx context.Context, read func(context.Context, Query, func(Entry) error) error, q Query, since time.Time) ([]Event, error) {
	q.BM2 = true
	if !since.IsZero() {
		q.Since = SinceTime(since)
	}
	var out []Event
	err := read(ctx, q, func(e Entry) error {
		if ev, ok := DecodeFrom(e, q.trustedUID()); ok && !ev.Time.Before(since) {
			out = append(out, ev)
		}
		return nil
	})
	return out, err
}
