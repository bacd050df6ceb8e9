package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bm2dev/bm2/journal"
)

// JournalQuery selects journal entries the way journalctl's command line
// does; [Env.ReadJournal] runs it.
type JournalQuery struct {
	// Units are units whose messages are wanted (journalctl -u UNIT, for
	// each): what their processes logged and what systemd logged about them.
	Units []string
	// Matches are FIELD=VALUE matches: values of one field are alternatives,
	// different fields must all match (journalctl's rules).
	Matches []string
	// Since is journalctl's --since: a time as journalctl understands it
	// ("10 min ago", "2026-11-30 04:00", "@1764475200.5"); "" for no limit.
	Since string
	// Lines is journalctl's -n: only the last that many entries; 0 for all.
	Lines int
	// Follow is journalctl's -f: after the existing entries, wait for new
	// ones until ctx ends.
	Follow bool
}

// args renders the query as journalctl arguments (JSON output, no pager).
func (q JournalQuery) args() []string {
	args := []string{"--no-pager", "-o", "json"}
	for _, u := range q.Units {
		args = append(args, "-u", u)
	}
	if q.Since != "" {
		args = append(args, "--since", q.Since)
	}
	if q.Lines > 0 {
		args = append(args, "-n", strconv.Itoa(q.Lines))
	}
	if q.Follow {
		args = append(args, "-f")
	}
	return append(args, q.Matches...)
}

// sinceTime renders t for JournalQuery.Since, to the microsecond.
func sinceTime(t time.Time) string {
	us := t.UnixMicro()
	return fmt.Sprintf("@%d.%06d", us/1e6, us%1e6)
}

// JournalEntry is one journal entry: its fields as journalctl -o json
// prints them (binary values decoded, the first of repeated fields).
type JournalEntry map[string]string

// Time is when the entry was logged (__REALTIME_TIMESTAMP).
func (e JournalEntry) Time() time.Time {
	us, err := strconv.ParseInt(e["__REALTIME_TIMESTAMP"], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

// parseJournalEntry decodes one line of journalctl -o json. Values are
// strings, arrays of bytes (binary data) or arrays of either (a field
// that appears more than once; the first value is kept).
func parseJournalEntry(line []byte) (JournalEntry, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return nil, err
	}
	e := make(JournalEntry, len(raw))
	for k, v := range raw {
		if s, ok := journalValue(v); ok {
			e[k] = s
		}
	}
	return e, nil
}

func journalValue(v json.RawMessage) (string, bool) {
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
		return journalValue(many[0])
	}
	return "", false
}

// errJournalRestricted means journalctl ran but could not open the system
// journal: the caller is not root nor in the adm or systemd-journal group.
var errJournalRestricted = errors.New("this user cannot read the system journal")

// journalAccessHint is what to do about errJournalRestricted.
const journalAccessHint = "run it as root, or add yourself to the adm or systemd-journal group"

// readJournal is the default Env.ReadJournal: it runs journalctl and
// calls each for every entry as it arrives. A query that does not follow
// is bounded to 30 s. When each returns an error, reading stops and the
// error is returned.
func readJournal(ctx context.Context, q JournalQuery, each func(JournalEntry) error) error {
	if !q.Follow {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	args := q.args()
	cmd := exec.CommandContext(ctx, "journalctl", args...)
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("journalctl: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fail(ExitFailure, "bm2 reads the journal with journalctl, from systemd; is it installed?",
			fmt.Errorf("run journalctl: %w", err))
	}
	var cbErr error
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // "-- No entries --" and the like
		}
		e, err := parseJournalEntry(line)
		if err != nil {
			continue
		}
		if cbErr = each(e); cbErr != nil {
			break
		}
	}
	if cbErr != nil || sc.Err() != nil {
		_ = cmd.Process.Kill()
		_, _ = io.Copy(io.Discard, out)
	}
	werr := cmd.Wait()
	switch {
	case cbErr != nil:
		return cbErr
	case ctx.Err() != nil:
		return ctx.Err()
	case sc.Err() != nil:
		return fmt.Errorf("read journalctl's output: %w", sc.Err())
	case werr != nil && strings.Contains(stderr.String(), "insufficient permissions"):
		return errJournalRestricted
	case werr != nil:
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = werr.Error()
		}
		return fmt.Errorf("journalctl %s: %s", strings.Join(args, " "), msg)
	}
	if s := stderr.String(); strings.Contains(s, "not seeing messages from other users") || strings.Contains(s, "insufficient permissions") {
		return errJournalRestricted
	}
	return nil
}

// limitedBuffer keeps the first 8 KiB written to it.
type limitedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 8<<10 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// event is one of bm2's own journal entries (SYSLOG_IDENTIFIER=bm2): an
// event of package journal, or a message of the generator (no Kind).
type event struct {
	Time       time.Time
	Kind       string // BM2_EVENT; "" for a plain message
	Project    string
	Instance   string
	Reason     string
	Level      string // BM2_LEVEL, or from PRIORITY
	Message    string
	Detail     string
	MessageID  string
	Invocation string // BM2_INVOCATION: the instance's InvocationID, when the event records it
}

func eventOf(e JournalEntry) event {
	ev := event{
		Time:       e.Time(),
		Kind:       e["BM2_EVENT"],
		Project:    e["BM2_PROJECT"],
		Instance:   e["BM2_INSTANCE"],
		Reason:     e["BM2_REASON"],
		Level:      e["BM2_LEVEL"],
		Message:    e["MESSAGE"],
		Detail:     e["BM2_DETAIL"],
		MessageID:  e["MESSAGE_ID"],
		Invocation: e["BM2_INVOCATION"],
	}
	if ev.Level == "" {
		ev.Level = priorityLevel(e["PRIORITY"])
	}
	return ev
}

// priorityLevel names a syslog priority the way bm2's events do.
func priorityLevel(p string) string {
	n, err := strconv.Atoi(p)
	switch {
	case err != nil:
		return ""
	case n <= 3:
		return "error"
	case n == 4:
		return "warning"
	}
	return "info"
}

// projectEvents returns bm2's events of the given kinds for the projects,
// logged at or after since.
func (a *App) projectEvents(ctx context.Context, projects []string, kinds []journal.Kind, since time.Time) ([]event, error) {
	q := JournalQuery{Matches: []string{"SYSLOG_IDENTIFIER=" + journal.Identifier}}
	for _, p := range projects {
		q.Matches = append(q.Matches, "BM2_PROJECT="+p)
	}
	for _, k := range kinds {
		q.Matches = append(q.Matches, "BM2_EVENT="+string(k))
	}
	if !since.IsZero() {
		// journalctl's --since is inclusive; entries are filtered exactly below.
		q.Since = sinceTime(since)
	}
	var out []event
	err := a.ReadJournal(ctx, q, func(e JournalEntry) error {
		ev := eventOf(e)
		if !ev.Time.Before(since) {
			out = append(out, ev)
		}
		return nil
	})
	return out, err
}
