package journal

import (
	"context"
	"errors"
	"testing"
	"time"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
)

// Send hands the entry over as it is, and a bounded Send returns when its
// context ends even if journald never takes the entry.
func TestSend(t *testing.T) {
	defer func(orig func(string, sdjournal.Priority, map[string]string) error) { sendEntry = orig }(sendEntry)
	var got []string
	sendEntry = func(msg string, p sdjournal.Priority, vars map[string]string) error {
		if p != sdjournal.PriWarning || vars[FieldIdentifier] != Identifier {
			t.Errorf("entry %q: priority %d, fields %v", msg, p, vars)
		}
		got = append(got, msg)
		return nil
	}
	vars := map[string]string{FieldIdentifier: Identifier}
	if err := Send(context.Background(), "m", 4, vars); err != nil || len(got) != 1 || got[0] != "m" {
		t.Fatalf("Send = %v, sent %q", err, got)
	}

	stuck := make(chan struct{})
	defer close(stuck)
	sendEntry = func(string, sdjournal.Priority, map[string]string) error { <-stuck; return nil }
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// Unbounded, this Send would never return: the test's own deadline is
	// the bound, not a timed assertion.
	if err := Send(ctx, "m", 4, vars); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send to a journald that takes nothing = %v", err)
	}
}

// sent is one entry a fake Sender was given.
type sent struct {
	msg      string
	priority int
	vars     map[string]string
}

// Emit sends exactly EventEntry's fields, MESSAGE and PRIORITY as the
// message and the priority; and EventEntry, for an event with every field
// set, has each of EventFields and nothing else: what package relay
// accepts is what an event is.
func TestEmitSendsEventEntry(t *testing.T) {
	e := Event{Kind: InstanceCrashed, Project: "api", Instance: "api-0", Reason: "exit_code",
		Message: "api-0 exited with status 1 (exit-code)", Detail: "line 1\nline 2", Port: 3000,
		Invocation: "0123456789abcdef0123456789abcdef", ServiceResult: "exit-code", ExitStatus: "1",
		Signal: "SIGKILL", Restarts: "2", Path: "/var/log/bm2/api/api-0.crash.log", Errno: "ENOSPC"}
	var got []sent
	j := Journald{Send: func(_ context.Context, msg string, p int, vars map[string]string) error {
		got = append(got, sent{msg, p, vars})
		return nil
	}}
	if err := j.Emit(e); err != nil || len(got) != 1 {
		t.Fatalf("Emit = %v, sent %d", err, len(got))
	}
	if got[0].msg != e.Message || got[0].priority != int(sdjournal.PriWarning) {
		t.Errorf("sent %q at %d", got[0].msg, got[0].priority)
	}
	entry := EventEntry(e)
	for k, v := range entry {
		if !IsEventField(k) {
			t.Errorf("EventEntry has %s, which EventFields lacks", k)
		}
		if k == FieldMessage || k == FieldPriority {
			if _, dup := got[0].vars[k]; dup {
				t.Errorf("%s sent as a field as well", k)
			}
			continue
		}
		if got[0].vars[k] != v {
			t.Errorf("sent %s=%q, EventEntry has %q", k, got[0].vars[k], v)
		}
	}
	if len(got[0].vars) != len(entry)-2 {
		t.Errorf("sent %d fields besides MESSAGE and PRIORITY, EventEntry has %d", len(got[0].vars), len(entry)-2)
	}
	for _, k := range EventFields() {
		if _, ok := entry[k]; !ok {
			t.Errorf("EventFields names %s, which no event carries", k)
		}
	}
	if IsEventField(FieldUID) || IsEventField(FieldObjectUnit) {
		t.Error("journald's own fields and OBJECT_SYSTEMD_UNIT are no event's")
	}
}

// SendEntry sends only a syslog priority; a journald that refuses the
// entry makes Emit fall back.
func TestSendEntryPriority(t *testing.T) {
	called := false
	send := func(context.Context, string, int, map[string]string) error { called = true; return nil }
	for _, p := range []string{"", "8", "-1", "04", "x", "7 "} {
		if err := SendEntry(context.Background(), send, Entry{FieldMessage: "m", FieldPriority: p}); err == nil || called {
			t.Errorf("PRIORITY %q: %v, sent %v", p, err, called)
		}
	}
	if err := SendEntry(context.Background(), send, Entry{FieldMessage: "m", FieldPriority: "0"}); err != nil || !called {
		t.Errorf("PRIORITY 0: %v, sent %v", err, called)
	}
	j := Journald{Send: func(context.Context, string, int, map[string]string) error { return errors.New("refused") }}
	if err := j.Emit(Event{Kind: InstanceCrashed, Message: "m"}); err == nil {
		t.Error("Emit with a refusing journald and no fallback succeeded")
	}
}
