package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// The units that relay events, of the same names in the system manager
// and in a user's: ProbeUnit (the template of every instance's reusePort
// probe) makes the scope's spool (layout.Layout.EventsDir,
// RuntimeDirectory=) and drains it at every start; TimerUnit starts
// ServiceUnit (`bm2-probe events`, ConditionDirectoryNotEmpty=) every
// half minute for whatever no probe or failure hook has drained.
const (
	ProbeUnit   = "bm2-probe@.service"
	TimerUnit   = "bm2-events.timer"
	ServiceUnit = "bm2-events.service"
)

// lockPoll is how often a drainer looks again for the spool's lock while
// another drainer holds it (for the few milliseconds its run takes).
const lockPoll = 5 * time.Millisecond

// lock takes the spool's lock (flock(2) on its directory), waiting while
// another drainer holds it, until ctx ends; unlock releases it.
func (s Spool) lock(ctx context.Context) (unlock func(), err error) {
	fd, err := safefs.OpenAt(unix.AT_FDCWD, s.Dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("the relay spool %s: %w", s.Dir, err)
	}
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Close(fd) }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			unix.Close(fd)
			return nil, fmt.Errorf("lock the relay spool %s: %w", s.Dir, err)
		}
		select {
		case <-ctx.Done():
			unix.Close(fd)
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// The spool's bounds. Past MaxFiles events or MaxBytes, the sink sends
// directly: a relay that is stopped or far behind must not fill /run.
// MaxFileSize bounds one event's file (an event larger than that is sent
// directly), and what the drainer reads of one file.
const (
	MaxFiles    = 1000
	MaxBytes    = 4 << 20
	MaxFileSize = 64 << 10
)

// StaleAfter is how long the oldest event may wait before the sink takes
// the relay for stopped (no probe has started since, and bm2-events.timer
// was stopped by hand) and sends directly. The events waiting go when
// either runs again.
const StaleAfter = time.Minute

// Spool is a relay spool directory.
type Spool struct {
	Dir string
	// Owner is the UID the directory and every file in it must have: 0
	// (root) in system scope, the user's in user scope.
	Owner int
}

// errNoSpool is a spool directory that does not exist: no probe has made
// it yet.
var errNoSpool = errors.New("no relay spool")

// check makes sure the spool is a directory (not a link) of the owner's
// alone; errNoSpool when there is none.
func (s Spool) check() error {
	st, err := os.Lstat(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %v", errNoSpool, err)
	}
	if err != nil {
		return err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || st.Mode().Perm()&0o077 != 0 || sys == nil || int(sys.Uid) != s.Owner {
		uid := "unknown"
		if sys != nil {
			uid = fmt.Sprint(sys.Uid)
		}
		return fmt.Errorf("%s must be a directory of uid %d with mode 0700 (it is %v, uid %s): "+
			"remove it, %s makes it again", s.Dir, s.Owner, st.Mode(), uid, ProbeUnit)
	}
	return nil
}

// objectField is the field that names the unit an event is about: the
// system's or a user's (journalctl -u, --user-unit).
func (s Spool) objectField() string {
	if s.Owner == 0 {
		return journal.FieldObjectUnit
	}
	return journal.FieldObjectUserUnit
}

// unitOf is the unit of an event's instance ("api-0": bm2@api-0.service),
// "" when the event names none.
func unitOf(instance string) string {
	project, i, ok := units.ParseInstance(instance)
	if !ok || instance != units.InstanceID(project, i) {
		return ""
	}
	return units.Instance(project, i)
}

// The parts of a spool file's name: TIME-PID-SEQ.json, each part of fixed
// width so that names sort as numbers do.
const (
	timeDigits = 20 // nanoseconds since boot
	pidDigits  = 10
	seqDigits  = 10
	nameLen    = timeDigits + 1 + pidDigits + 1 + seqDigits + len(".json")
)

// fileName is the name of the event a process (pid) emitted as its seq-th,
// at since (since boot).
func fileName(since time.Duration, pid int, seq uint64) string {
	return fmt.Sprintf("%0*d-%0*d-%0*d.json", timeDigits, since.Nanoseconds(), pidDigits, pid, seqDigits, seq)
}

// parseName reads the time since boot out of an event's file name; ok is
// false for any other name.
func parseName(name string) (since time.Duration, ok bool) {
	if len(name) != nameLen || !strings.HasSuffix(name, ".json") {
		return 0, false
	}
	var ns int64
	for i := 0; i < nameLen-len(".json"); i++ {
		c := name[i]
		switch {
		case i == timeDigits || i == timeDigits+1+pidDigits:
			if c != '-' {
				return 0, false
			}
		case c < '0' || c > '9':
			return 0, false
		case i < timeDigits:
			ns = ns*10 + int64(c-'0')
		}
	}
	return time.Duration(ns), ns >= 0
}

// waiting is what the spool holds: its events (by name, oldest first),
// their bytes, and the temporary files of writes under way (safefs.Write).
type waiting struct {
	names []string
	bytes int64
	temps []string
	other []fs.DirEntry // anything else: not bm2's
}

// list reads the spool directory, in name order.
func (s Spool) list() (waiting, error) {
	var w waiting
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return w, err
	}
	for _, e := range ents {
		name := e.Name()
		_, ok := parseName(name)
		switch {
		case strings.HasPrefix(name, safefs.TempPrefix):
			w.temps = append(w.temps, name)
		case ok && e.Type().IsRegular():
			w.names = append(w.names, name)
			if info, err := e.Info(); err == nil {
				w.bytes += info.Size()
			}
		default:
			w.other = append(w.other, e)
		}
	}
	return w, nil
}

// encode is an entry as a spool file holds it: a JSON object, each value
// a string, or, when it is not UTF-8, an array of its bytes (as
// journalctl -o json writes it), so that every byte comes back.
func encode(entry journal.Entry) ([]byte, error) {
	obj := make(map[string]any, len(entry))
	for k, v := range entry {
		if utf8.ValidString(v) {
			obj[k] = v
			continue
		}
		b := make([]int, len(v))
		for i := range len(v) {
			b[i] = int(v[i])
		}
		obj[k] = b
	}
	return json.Marshal(obj)
}

// decode reads a spool file back strictly: one JSON object, each key once,
// each value a string or an array of bytes (0 to 255), nothing after it.
func decode(data []byte) (journal.Entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	entry := journal.Entry{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not a JSON object: %v", err)
		}
		key, _ := tok.(string)
		if _, dup := entry[key]; dup {
			return nil, fmt.Errorf("key %s: given twice", key)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("key %s: %v", key, err)
		}
		v, err := decodeValue(raw)
		if err != nil {
			return nil, fmt.Errorf("key %s: %v", key, err)
		}
		entry[key] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the JSON object")
	}
	return entry, nil
}

func decodeValue(raw json.RawMessage) (string, error) {
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case len(raw) > 0 && raw[0] == '[':
		var nums []int
		if err := json.Unmarshal(raw, &nums); err != nil {
			return "", errors.New("not a string nor an array of bytes")
		}
		b := make([]byte, len(nums))
		for i, n := range nums {
			if n < 0 || n > 255 {
				return "", fmt.Errorf("%d is not a byte", n)
			}
			b[i] = byte(n)
		}
		return string(b), nil
	}
	return "", errors.New("not a string nor an array of bytes")
}

// validate tells whether entry is an event bm2 wrote, naming the key that
// is not: only the fields of an event (journal.EventFields) and the unit
// of its own instance, SYSLOG_IDENTIFIER bm2, a syslog PRIORITY, a kind
// bm2 emits.
func (s Spool) validate(entry journal.Entry) error {
	object := s.objectField()
	for k := range entry {
		switch {
		case strings.HasPrefix(k, "_"):
			return fmt.Errorf("key %s: a field journald sets itself, which no sender may", k)
		case k == object:
			if want := unitOf(entry[journal.FieldInstance]); want == "" || entry[k] != want {
				return fmt.Errorf("key %s: %q is not the unit of the event's instance %q", k, entry[k], entry[journal.FieldInstance])
			}
		case !journal.IsEventField(k):
			return fmt.Errorf("key %s: not a field of bm2's events", k)
		}
	}
	for _, k := range []string{journal.FieldIdentifier, journal.FieldMessage, journal.FieldPriority, journal.FieldEvent} {
		if _, ok := entry[k]; !ok {
			return fmt.Errorf("key %s: missing", k)
		}
	}
	if id := entry[journal.FieldIdentifier]; id != journal.Identifier {
		return fmt.Errorf("key %s: %q, not %s", journal.FieldIdentifier, id, journal.Identifier)
	}
	if _, err := journal.ParsePriority(entry[journal.FieldPriority]); err != nil {
		return fmt.Errorf("key %s: %v", journal.FieldPriority, err)
	}
	if k := journal.Kind(entry[journal.FieldEvent]); !journal.KnownKind(k) {
		return fmt.Errorf("key %s: %q is no kind bm2 emits", journal.FieldEvent, k)
	}
	return nil
}

// read reads one spooled event: a regular file of the spool's owner with
// one link, never through a link, of at most MaxFileSize bytes, holding an
// event (decode, validate). The error says what it is instead;
// fs.ErrNotExist when it is gone.
func (s Spool) read(name string) (journal.Entry, error) {
	entry, _, err := s.readFile(name)
	return entry, err
}

// readFile is read, with the time the file was last written.
func (s Spool) readFile(name string) (journal.Entry, time.Time, error) {
	path := filepath.Join(s.Dir, name)
	st, err := os.Lstat(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !st.Mode().IsRegular() {
		return nil, time.Time{}, fmt.Errorf("%s is %s, not a regular file", path, what(st.Mode()))
	}
	f, err := safefs.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, time.Time{}, err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.Mode().IsRegular():
		return nil, time.Time{}, fmt.Errorf("%s is %s, not a regular file", path, what(st.Mode()))
	case sys == nil || int(sys.Uid) != s.Owner:
		return nil, time.Time{}, fmt.Errorf("%s is not uid %d's, whose spool it is in", path, s.Owner)
	case sys.Nlink != 1:
		return nil, time.Time{}, fmt.Errorf("%s has %d links: a file bm2 writes has one", path, sys.Nlink)
	case st.Size() > MaxFileSize:
		return nil, time.Time{}, fmt.Errorf("%s has %d bytes, more than an event's %d", path, st.Size(), MaxFileSize)
	}
	data, err := safefs.ReadAll(f, MaxFileSize)
	if errors.Is(err, safefs.ErrTooLarge) {
		return nil, time.Time{}, fmt.Errorf("%s grew past %d bytes", path, MaxFileSize)
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	entry, err := decode(data)
	if err == nil {
		err = s.validate(entry)
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %v", path, err)
	}
	return entry, st.ModTime(), nil
}

// what names a kind of file.
func what(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "something else"
}
