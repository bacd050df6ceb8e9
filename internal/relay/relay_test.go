package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/journal"
)

// sent is one entry a fake journald was given.
type sent struct {
	msg      string
	priority int
	vars     map[string]string
}

// fakeJournal records what is sent to it, in order.
type fakeJournal struct{ got []sent }

func (f *fakeJournal) send(_ context.Context, msg string, p int, vars map[string]string) error {
	f.got = append(f.got, sent{msg, p, maps.Clone(vars)})
	return nil
}

func (f *fakeJournal) messages() []string {
	var out []string
	for _, s := range f.got {
		out = append(out, s.msg)
	}
	return out
}

// spoolDir makes a spool as bm2-probe@.service does: a directory of this
// process's user, 0700.
func spoolDir(t *testing.T) Spool {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "events")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return Spool{Dir: dir, Owner: os.Geteuid()}
}

// clock is a fake CLOCK_BOOTTIME.
type clock struct{ t time.Duration }

func (c *clock) now() time.Duration { return c.t }

// newSink is a relay into sp whose direct path is direct, with a clock
// that stands still unless the test moves it.
func newSink(sp Spool, direct *fakeJournal, c *clock, log *bytes.Buffer) Sink {
	s := Sink{Spool: sp, Direct: journal.Journald{Send: direct.send}, SinceBoot: c.now}
	if log != nil {
		s.Log = log
	}
	return s
}

func drainer(sp Spool, j *fakeJournal, log *bytes.Buffer) Drainer {
	d := Drainer{Spool: sp, Send: j.send, Backoff: []time.Duration{}}
	if log != nil {
		d.Log = log
	}
	return d
}

func spooled(t *testing.T, sp Spool) []string {
	t.Helper()
	ents, err := os.ReadDir(sp.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// crash is an event of the exit hook with every kind of value: a line
// break, bytes that are not UTF-8, a port.
func crash(msg string) journal.Event {
	return journal.Event{Kind: journal.InstanceCrashed, Project: "api", Instance: "api-0", Reason: "exit_code",
		Message: msg, Detail: "last line:\n\xff\xfebinary\x00 and \u00e9", Port: 3000,
		Invocation: "0123456789abcdef0123456789abcdef", ServiceResult: "exit-code", ExitStatus: "1"}
}

// An event goes into the spool as one file, and the drainer sends
// journald exactly what a direct emit would have sent, every byte of
// every field, with the instance's unit named as the one field more; the
// spool is empty after.
func TestRoundTrip(t *testing.T) {
	sp := spoolDir(t)
	var direct, relayed fakeJournal
	var log bytes.Buffer
	e := crash("api-0 exited with status 1 (exit-code)")
	if err := newSink(sp, &direct, &clock{time.Hour}, &log).Emit(e); err != nil {
		t.Fatal(err)
	}
	if len(direct.got) != 0 || log.Len() != 0 {
		t.Fatalf("relayed event also sent directly (%d) or logged %q", len(direct.got), log.String())
	}
	names := spooled(t, sp)
	if len(names) != 1 {
		t.Fatalf("spool holds %q, want one event", names)
	}
	st, err := os.Stat(filepath.Join(sp.Dir, names[0]))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("spool file %v, %v: want 0600", st, err)
	}
	if _, ok := parseName(names[0]); !ok {
		t.Errorf("file name %q is not TIME-PID-SEQ.json", names[0])
	}

	res, err := drainer(sp, &relayed, &log).Run(t.Context())
	if err != nil || res.Relayed != 1 || res.Refused != 0 {
		t.Fatalf("Run = %+v, %v\n%s", res, err, log.String())
	}
	if left := spooled(t, sp); len(left) != 0 {
		t.Errorf("spool still holds %q", left)
	}

	var want fakeJournal
	if err := (journal.Journald{Send: want.send}).Emit(e); err != nil {
		t.Fatal(err)
	}
	got, w := relayed.got[0], want.got[0]
	if got.msg != w.msg || got.priority != w.priority {
		t.Errorf("relayed %q at %d, direct %q at %d", got.msg, got.priority, w.msg, w.priority)
	}
	w.vars[sp.objectField()] = "bm2@api-0.service"
	if !maps.Equal(got.vars, w.vars) {
		t.Errorf("relayed fields differ from a direct emit's (plus %s):\n got %q\nwant %q", sp.objectField(), got.vars, w.vars)
	}
}

// An event about no instance carries no unit.
func TestRoundTripProjectEvent(t *testing.T) {
	sp := spoolDir(t)
	var direct, relayed, want fakeJournal
	e := journal.WriteFailed("api", "", "/var/lib/bm2/errored/api", syscall.ENOSPC, "")
	if err := newSink(sp, &direct, &clock{}, nil).Emit(e); err != nil {
		t.Fatal(err)
	}
	if _, err := drainer(sp, &relayed, nil).Run(t.Context()); err != nil || len(relayed.got) != 1 {
		t.Fatalf("Run: %v, %d sent", err, len(relayed.got))
	}
	_ = journal.Journald{Send: want.send}.Emit(e)
	if !maps.Equal(relayed.got[0].vars, want.got[0].vars) {
		t.Errorf("relayed %q, direct %q", relayed.got[0].vars, want.got[0].vars)
	}
}

// Events reach journald in the order they were emitted: by time since
// boot, then by writer, then by each writer's count, whatever order the
// files were made in.
func TestOrder(t *testing.T) {
	sp := spoolDir(t)
	var direct, relayed fakeJournal
	c := &clock{10 * time.Second}
	s := newSink(sp, &direct, c, nil)
	// Three of the same nanosecond, from one process: its count orders
	// them.
	for _, m := range []string{"b1", "b2", "b3"} {
		if err := s.Emit(crash(m)); err != nil {
			t.Fatal(err)
		}
	}
	// Written after them, but emitted before, by another process.
	other := s
	other.Pid = func() int { return 1 }
	c.t = 5 * time.Second
	if err := other.Emit(crash("a")); err != nil {
		t.Fatal(err)
	}
	c.t = 11 * time.Second
	if err := s.Emit(crash("c")); err != nil {
		t.Fatal(err)
	}
	if _, err := drainer(sp, &relayed, nil).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(relayed.messages(), " "); got != "a b1 b2 b3 c" {
		t.Errorf("sent %s, want a b1 b2 b3 c", got)
	}
}

// writeEntry puts a file with these fields into the spool under name.
func writeEntry(t *testing.T, sp Spool, name string, entry journal.Entry) string {
	t.Helper()
	data, err := encode(entry)
	if err != nil {
		t.Fatal(err)
	}
	return writeRaw(t, sp, name, data)
}

func writeRaw(t *testing.T, sp Spool, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(sp.Dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// good is a well-formed spooled event, as the sink writes it.
func good(sp Spool) journal.Entry {
	entry := journal.EventEntry(crash("good"))
	entry[sp.objectField()] = "bm2@api-0.service"
	return entry
}

func with(entry journal.Entry, k, v string) journal.Entry {
	entry = maps.Clone(entry)
	entry[k] = v
	return entry
}

func without(entry journal.Entry, k string) journal.Entry {
	entry = maps.Clone(entry)
	delete(entry, k)
	return entry
}

// Whatever is in the spool that is not an event bm2 wrote is refused:
// said, naming the file and why, removed, and never sent; the events
// beside it are sent all the same.
func TestHostileEntries(t *testing.T) {
	n := 0
	name := func() string { n++; return fileName(time.Duration(n), 1, uint64(n)) }
	for _, c := range []struct {
		what string
		make func(t *testing.T, sp Spool) // puts the hostile entry into sp
		why  string                       // in the refusal line
	}{
		{"symlink to an event", func(t *testing.T, sp Spool) {
			target := writeEntry(t, Spool{Dir: t.TempDir()}, "x", good(sp))
			if err := os.Symlink(target, filepath.Join(sp.Dir, name())); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link, not a regular file"},
		{"fifo", func(t *testing.T, sp Spool) {
			if err := syscall.Mkfifo(filepath.Join(sp.Dir, name()), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is a FIFO, not a regular file"},
		{"directory", func(t *testing.T, sp Spool) {
			dir := filepath.Join(sp.Dir, name())
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			writeEntry(t, Spool{Dir: dir}, name(), good(sp))
		}, "is a directory, not a regular file"},
		{"hard link", func(t *testing.T, sp Spool) {
			// Beside the spool, on its file system.
			path := writeEntry(t, Spool{Dir: filepath.Dir(sp.Dir)}, "x", good(sp))
			if err := os.Link(path, filepath.Join(sp.Dir, name())); err != nil {
				t.Fatal(err)
			}
		}, "has 2 links"},
		{"oversized", func(t *testing.T, sp Spool) {
			writeEntry(t, sp, name(), with(good(sp), journal.FieldDetail, strings.Repeat("x", MaxFileSize)))
		}, fmt.Sprintf("more than an event's %d", MaxFileSize)},
		{"garbage", func(t *testing.T, sp Spool) { writeRaw(t, sp, name(), []byte("MESSAGE=hi\nPRIORITY=0\n")) }, "not a JSON object"},
		{"trailing data", func(t *testing.T, sp Spool) {
			data, _ := encode(good(sp))
			writeRaw(t, sp, name(), append(data, "{}"...))
		}, "more after the JSON object"},
		{"key twice", func(t *testing.T, sp Spool) {
			writeRaw(t, sp, name(), []byte(`{"SYSLOG_IDENTIFIER":"bm2","SYSLOG_IDENTIFIER":"app"}`))
		}, "key SYSLOG_IDENTIFIER: given twice"},
		{"number value", func(t *testing.T, sp Spool) { writeRaw(t, sp, name(), []byte(`{"PRIORITY":3}`)) }, "key PRIORITY: not a string nor an array of bytes"},
		{"not a byte", func(t *testing.T, sp Spool) { writeRaw(t, sp, name(), []byte(`{"MESSAGE":[104,300]}`)) }, "key MESSAGE: 300 is not a byte"},
		{"wrong identifier", func(t *testing.T, sp Spool) {
			writeEntry(t, sp, name(), with(good(sp), journal.FieldIdentifier, "app"))
		}, `key SYSLOG_IDENTIFIER: "app", not bm2`},
		{"no identifier", func(t *testing.T, sp Spool) {
			writeEntry(t, sp, name(), without(good(sp), journal.FieldIdentifier))
		}, "key SYSLOG_IDENTIFIER: missing"},
		{"forged _UID", func(t *testing.T, sp Spool) { writeEntry(t, sp, name(), with(good(sp), "_UID", "0")) }, "key _UID: a field journald sets itself"},
		{"forged _PID", func(t *testing.T, sp Spool) { writeEntry(t, sp, name(), with(good(sp), "_PID", "1")) }, "key _PID: a field journald sets itself"},
		{"forged _SYSTEMD_UNIT", func(t *testing.T, sp Spool) {
			writeEntry(t, sp, name(), with(good(sp), "_SYSTEMD_UNIT", "bm2@api-0.service"))
		}, "key _SYSTEMD_UNIT: a field journald sets itself"},
		{"field of no event", func(t *testing.T, sp Spool) {
			writeEntry(t, sp, name(), with(good(sp), "CODE_FILE", "x.go"))
		}, "key CODE_FILE: not a field of bm2's events"},
		{"another unit", func(t *testing.T, sp Spool) {
			writeEntry(t, sp, name(), with(good(sp), sp.objectField(), "sshd.service"))
		}, `: "sshd.service" is not the unit of the event's instance "api-0"`},
		{"the other scope's unit field", func(t *testing.T, sp Spool) {
			other := journal.FieldObjectUnit
			if sp.objectField() == other {
				other = journal.FieldObjectUserUnit
			}
			writeEntry(t, sp, name(), with(without(good(sp), sp.objectField()), other, "bm2@api-0.service"))
		}, "not a field of bm2's events"},
		{"bad priority", func(t *testing.T, sp Spool) { writeEntry(t, sp, name(), with(good(sp), journal.FieldPriority, "9")) }, `key PRIORITY: PRIORITY "9" is not a syslog priority`},
		{"no priority", func(t *testing.T, sp Spool) { writeEntry(t, sp, name(), without(good(sp), journal.FieldPriority)) }, "key PRIORITY: missing"},
		{"unknown kind", func(t *testing.T, sp Spool) {
			writeEntry(t, sp, name(), with(good(sp), journal.FieldEvent, "reuseport_confirmed_by_app"))
		}, `key BM2_EVENT: "reuseport_confirmed_by_app" is no kind bm2 emits`},
		{"name bm2 never gives", func(t *testing.T, sp Spool) { writeEntry(t, sp, "0-0-0.json", good(sp)) }, "is not an event bm2 wrote (its names are TIME-PID-SEQ.json)"},
		{"other owner", func(t *testing.T, sp Spool) {
			testutil.Root(t) // only root gives a file to another user
			path := writeEntry(t, sp, name(), good(sp))
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "is not uid 0's, whose spool it is in"},
	} {
		t.Run(c.what, func(t *testing.T) {
			sp := spoolDir(t)
			c.make(t, sp)
			writeEntry(t, sp, fileName(time.Hour, 1, 1), good(sp)) // after the hostile one
			var j fakeJournal
			var log bytes.Buffer
			res, err := drainer(sp, &j, &log).Run(t.Context())
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, log.String())
			}
			if res.Refused != 1 || res.Relayed != 1 || len(j.got) != 1 || j.got[0].msg != "good" {
				t.Errorf("Run = %+v, sent %q; want the good event alone\n%s", res, j.messages(), log.String())
			}
			if !strings.Contains(log.String(), "refused "+sp.Dir+"/") || !strings.Contains(log.String(), c.why) ||
				!strings.Contains(log.String(), "; removed\n") {
				t.Errorf("log lacks the refusal (%q):\n%s", c.why, log.String())
			}
			if left := spooled(t, sp); len(left) != 0 {
				t.Errorf("spool still holds %q", left)
			}
		})
	}
}

// With no spool (no probe has made it) an event goes to
// journald directly, as before the relay, and nothing is made or said;
// a spool that is not the owner's alone is not written either, and that
// is said.
func TestFallbackWithoutSpool(t *testing.T) {
	var direct fakeJournal
	var log bytes.Buffer
	sp := Spool{Dir: filepath.Join(t.TempDir(), "events"), Owner: os.Geteuid()}
	e := crash("m")
	if err := newSink(sp, &direct, &clock{}, &log).Emit(e); err != nil {
		t.Fatal(err)
	}
	var want fakeJournal
	_ = journal.Journald{Send: want.send}.Emit(e)
	if len(direct.got) != 1 || !maps.Equal(direct.got[0].vars, want.got[0].vars) || log.Len() != 0 {
		t.Errorf("sent %v directly, said %q; want the event as a direct emit sends it, silently", direct.got, log.String())
	}
	if _, err := os.Lstat(sp.Dir); err == nil {
		t.Error("the sink made the spool")
	}

	direct.got = nil
	if err := os.Mkdir(sp.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := newSink(sp, &direct, &clock{}, &log).Emit(e); err != nil {
		t.Fatal(err)
	}
	if len(direct.got) != 1 || len(spooled(t, sp)) != 0 || !strings.Contains(log.String(), "must be a directory of uid") {
		t.Errorf("open spool: sent %d directly, spool %q, said %q", len(direct.got), spooled(t, sp), log.String())
	}
	if msg := direct.got[0].msg; msg != "m" {
		t.Errorf("sent %q", msg)
	}
}

// Past its bounds (files, bytes) the spool takes no more, and the events
// go to journald directly, each said; so they do when its oldest event
// has waited StaleAfter (nothing drains it), and when one is too large.
func TestBounds(t *testing.T) {
	sp := spoolDir(t)
	var direct fakeJournal
	var log bytes.Buffer
	c := &clock{time.Hour}
	s := newSink(sp, &direct, c, &log)
	s.MaxFiles = 3
	for i := range 5 {
		if err := s.Emit(crash(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(spooled(t, sp)); n != 3 || strings.Join(direct.messages(), " ") != "3 4" {
		t.Errorf("spooled %d, sent directly %q; want 3 and 3 4", n, direct.messages())
	}
	if strings.Count(log.String(), "holds 3 events") != 2 {
		t.Errorf("log:\n%s", log.String())
	}

	sp, direct.got, log = spoolDir(t), nil, bytes.Buffer{}
	s = newSink(sp, &direct, c, &log)
	data, _ := encode(good(sp))
	s.MaxBytes = int64(2*len(data) + 10)
	for _, m := range []string{"good", "good", "good"} {
		_ = s.Emit(crash(m))
	}
	if n := len(spooled(t, sp)); n != 2 || len(direct.got) != 1 || !strings.Contains(log.String(), "the most it keeps") {
		t.Errorf("byte bound: spooled %d, sent directly %d, said %q", n, len(direct.got), log.String())
	}

	sp, direct.got, log = spoolDir(t), nil, bytes.Buffer{}
	s = newSink(sp, &direct, c, &log)
	_ = s.Emit(crash("old"))
	c.t += StaleAfter + time.Second
	_ = s.Emit(crash("new"))
	if n := len(spooled(t, sp)); n != 1 || strings.Join(direct.messages(), " ") != "new" ||
		!strings.Contains(log.String(), "nothing is draining it") {
		t.Errorf("stale spool: spooled %d, sent directly %q, said %q", n, direct.messages(), log.String())
	}

	sp, direct.got, log = spoolDir(t), nil, bytes.Buffer{}
	big := crash("big")
	big.Detail = strings.Repeat("x", MaxFileSize)
	_ = newSink(sp, &direct, c, &log).Emit(big)
	if len(spooled(t, sp)) != 0 || len(direct.got) != 1 || !strings.Contains(log.String(), "more than the relay's") {
		t.Errorf("large event: spooled %q, sent directly %d, said %q", spooled(t, sp), len(direct.got), log.String())
	}
}

// A write that fails sends the event directly, and says so as
// state_write_failed naming the spool.
func TestWriteFailure(t *testing.T) {
	sp := spoolDir(t)
	var direct fakeJournal
	var log bytes.Buffer
	s := newSink(sp, &direct, &clock{time.Hour}, &log)
	s.Pid = func() int { return 7 }
	// The temporary name of the next file is taken by a directory.
	next := fileName(time.Hour, 7, seq.Load()+1)
	if err := os.Mkdir(filepath.Join(sp.Dir, ".#"+next), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(crash("m")); err != nil {
		t.Fatal(err)
	}
	if len(direct.got) != 2 || direct.got[0].msg != "m" || direct.got[1].vars[journal.FieldEvent] != string(journal.StateWriteFailed) ||
		direct.got[1].vars[journal.FieldPath] != sp.Dir {
		t.Errorf("sent directly %v", direct.got)
	}
	if !strings.Contains(log.String(), "instance_crashed of api-0 sent to journald directly") {
		t.Errorf("log %q", log.String())
	}
}

// An entry journald does not take is tried again, then left in the
// spool, with what follows it, for the next run.
func TestDrainKeepsWhatJournaldRefuses(t *testing.T) {
	sp := spoolDir(t)
	writeEntry(t, sp, fileName(1, 1, 1), good(sp))
	writeEntry(t, sp, fileName(2, 1, 2), good(sp))
	tries := 0
	var waits []time.Duration
	d := Drainer{Spool: sp, Backoff: []time.Duration{time.Second, 2 * time.Second},
		Send: func(context.Context, string, int, map[string]string) error { tries++; return syscall.ENOENT },
		After: func(w time.Duration) <-chan time.Time {
			waits = append(waits, w)
			ch := make(chan time.Time, 1)
			ch <- time.Time{}
			return ch
		}}
	res, err := d.Run(t.Context())
	if err == nil || res.Relayed != 0 || tries != 3 || !slices.Equal(waits, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("Run = %+v, %v after %d tries, waits %v", res, err, tries, waits)
	}
	if n := len(spooled(t, sp)); n != 2 {
		t.Errorf("spool holds %d, want both events still", n)
	}
}

// A write under way is waited for, and sent once it is done; one left
// over from a writer that died is removed.
func TestDrainWaitsForWrites(t *testing.T) {
	sp := spoolDir(t)
	now := time.Now()
	stale := writeRaw(t, sp, ".#"+fileName(1, 1, 1), []byte("{"))
	if err := os.Chtimes(stale, now.Add(-time.Minute), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	final := fileName(2, 1, 2)
	young := writeEntry(t, sp, ".#"+final, good(sp))
	var j fakeJournal
	var log bytes.Buffer
	d := drainer(sp, &j, &log)
	d.Now = func() time.Time { return now }
	d.After = func(time.Duration) <-chan time.Time {
		// The writer renames its file meanwhile.
		if err := os.Rename(young, filepath.Join(sp.Dir, final)); err != nil && !os.IsNotExist(err) {
			t.Error(err)
		}
		ch := make(chan time.Time, 1)
		ch <- now
		return ch
	}
	res, err := d.Run(t.Context())
	if err != nil || res.Relayed != 1 || res.Refused != 0 || len(spooled(t, sp)) != 0 {
		t.Errorf("Run = %+v, %v; spool %q\n%s", res, err, spooled(t, sp), log.String())
	}
	if !strings.Contains(log.String(), "left over from a write that never ended") {
		t.Errorf("log:\n%s", log.String())
	}
}

// No spool, nothing to do; a spool someone else can write is not read.
func TestDrainChecksTheSpool(t *testing.T) {
	var j fakeJournal
	if res, err := drainer(Spool{Dir: filepath.Join(t.TempDir(), "none"), Owner: os.Geteuid()}, &j, nil).Run(t.Context()); err != nil || res != (Result{}) {
		t.Errorf("no spool: %+v, %v", res, err)
	}
	sp := spoolDir(t)
	writeEntry(t, sp, fileName(1, 1, 1), good(sp))
	if err := os.Chmod(sp.Dir, 0o733); err != nil {
		t.Fatal(err)
	}
	if _, err := drainer(sp, &j, nil).Run(t.Context()); err == nil || len(j.got) != 0 {
		t.Errorf("open spool: %v, sent %d", err, len(j.got))
	}
}

func TestParseName(t *testing.T) {
	name := fileName(1234567890123456789, 4242, 7)
	if name != "01234567890123456789-0000004242-0000000007.json" {
		t.Errorf("fileName = %s", name)
	}
	if d, ok := parseName(name); !ok || d != 1234567890123456789 {
		t.Errorf("parseName = %v, %v", d, ok)
	}
	for _, bad := range []string{"", "x.json", strings.Replace(name, "-", "_", 1), strings.Replace(name, "4", "a", 1),
		strings.TrimSuffix(name, ".json") + ".jsox", "0" + name} {
		if _, ok := parseName(bad); ok {
			t.Errorf("parseName(%q) ok", bad)
		}
	}
}

// One drainer at a time: while another holds the spool's lock, a run
// sends nothing and waits (here until its deadline); once the lock is
// free, a run sends every event once, in order.
func TestDrainersTakeTurns(t *testing.T) {
	sp := spoolDir(t)
	c := &clock{}
	var direct fakeJournal
	s := newSink(sp, &direct, c, nil)
	for _, m := range []string{"one", "two"} {
		c.t += time.Second
		if err := s.Emit(crash(m)); err != nil {
			t.Fatal(err)
		}
	}
	unlock, err := sp.lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var j fakeJournal
	// (A run that did not wait would send both at once, well within it.)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := drainer(sp, &j, nil).Run(ctx); !errors.Is(err, context.DeadlineExceeded) || len(j.got) != 0 {
		t.Fatalf("Run while another drains = %v, sent %q; want it to wait, sending nothing", err, j.messages())
	}
	unlock()
	res, err := drainer(sp, &j, nil).Run(t.Context())
	if err != nil || res.Relayed != 2 || strings.Join(j.messages(), " ") != "one two" {
		t.Fatalf("Run = %+v, %v, sent %q", res, err, j.messages())
	}
	if res, _ := drainer(sp, &j, nil).Run(t.Context()); res.Relayed != 0 || len(j.got) != 2 {
		t.Errorf("a second run sent %d more", res.Relayed)
	}
}
