package journal

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	sdjournal "github.com/coreos/go-systemd/v22/journal"

	"github.com/bm2dev/bm2/internal/reason"
)

// Identifier is the SYSLOG_IDENTIFIER of every bm2 event.
const Identifier = "bm2"

// The journal fields of bm2's events. Writers and readers use these names
// and nothing else.
const (
	FieldIdentifier    = "SYSLOG_IDENTIFIER"
	FieldMessage       = "MESSAGE"
	FieldMessageID     = "MESSAGE_ID"
	FieldPriority      = "PRIORITY"
	FieldEvent         = "BM2_EVENT"
	FieldProject       = "BM2_PROJECT"
	FieldInstance      = "BM2_INSTANCE"
	FieldReason        = "BM2_REASON"
	FieldLevel         = "BM2_LEVEL"
	FieldDetail        = "BM2_DETAIL"
	FieldPort          = "BM2_PORT"           // the port the probe checked
	FieldInvocation    = "BM2_INVOCATION"     // the InvocationID of the instance run an event is about
	FieldServiceResult = "BM2_SERVICE_RESULT" // systemd's Result of the run
	FieldExitStatus    = "BM2_EXIT_STATUS"
	FieldSignal        = "BM2_SIGNAL"
	FieldRestarts      = "BM2_RESTARTS"
	FieldPath          = "BM2_PATH"           // the file a state_write_failed could not write
	FieldErrno         = "BM2_ERRNO"          // why, as the errno's name: ENOSPC, EROFS, EIO
	FieldMemory        = "BM2_MEMORY"         // bytes: the instance's memory a memory_restart found
	FieldMemoryLimit   = "BM2_MEMORY_RESTART" // bytes: the project's memory_restart

	// The unit an entry is about, when its sender is not that unit
	// (journalctl -u UNIT shows root's entries that name UNIT so, and
	// --user-unit the user's own): what a relayed event carries in place
	// of the _SYSTEMD_UNIT it would have had (package relay).
	FieldObjectUnit     = "OBJECT_SYSTEMD_UNIT"
	FieldObjectUserUnit = "OBJECT_SYSTEMD_USER_UNIT"

	// Trusted fields, set by journald itself and never by the sender.
	FieldUID       = "_UID"
	FieldTransport = "_TRANSPORT"
	FieldRealtime  = "__REALTIME_TIMESTAMP"
)

// Kind names an event type.
type Kind string

// Event kinds. Their MESSAGE_IDs never change.
const (
	ReuseportConfirmed    Kind = "reuseport_confirmed"
	ReuseportMissing      Kind = "reuseport_missing"
	ReuseportProbeStopped Kind = "reuseport_probe_stopped"
	InstanceCrashed       Kind = "instance_crashed"
	InstanceErrored       Kind = "instance_errored"
	RuntimeRejected       Kind = "runtime_rejected"
	// An instance failed health_failures HTTP health checks in a row and
	// is restarted (bm2-probe health; package health).
	InstanceUnhealthy Kind = "instance_unhealthy"
	// An instance's memory stayed above memory_restart and it is reloaded
	// (bm2-probe memory).
	MemoryRestart Kind = "memory_restart"
	// A cluster-mode port cannot be steered round-robin (bm2-probe steer
	// add; package steer) and keeps the kernel's hash: once per project
	// and boot.
	SteeringUnavailable Kind = "steering_unavailable"
	// A notification given up by bm2-notify.service (package notify); never
	// notified itself.
	NotificationDropped Kind = "notification_dropped"
	// A file of bm2's root side (a crash.log, an errored mark, the
	// notification spool) could not be written; see [WriteFailed].
	StateWriteFailed Kind = "state_write_failed"
)

// VerdictKinds are the reusePort probe's verdicts on one run of an
// instance: what the waits of serve, start and reload wait for, and what
// the probe keeps beside the journal (package relay's Verdicts).
var VerdictKinds = []Kind{ReuseportConfirmed, ReuseportMissing, ReuseportProbeStopped}

type kindInfo struct {
	kind     Kind
	id       string
	priority sdjournal.Priority
}

// kinds is every kind bm2 emits, in the order the docs list them.
var kinds = []kindInfo{
	{ReuseportConfirmed, "44f30fffb0214cdeb15b218ca0731307", sdjournal.PriInfo},
	{ReuseportMissing, "fef51d7506c045a3aca2d41b6586cc18", sdjournal.PriErr},
	{ReuseportProbeStopped, "8e7912016f6042559e9797e5df92efde", sdjournal.PriWarning},
	{InstanceCrashed, "f2094127a7e2480c9ce5c60d78d83fb2", sdjournal.PriWarning},
	{InstanceErrored, "8142a04800b24fc794e195b028d94e5e", sdjournal.PriErr},
	{RuntimeRejected, "a8acedfbdb8643329ebb1f55ce178353", sdjournal.PriErr},
	{InstanceUnhealthy, "58c02f2ea208445d9a075b75e3fe804e", sdjournal.PriWarning},
	{MemoryRestart, "e009065866514038bcd12a767472707c", sdjournal.PriWarning},
	{SteeringUnavailable, "7233d6ef3ee44d33b268165cf51d70c4", sdjournal.PriWarning},
	{NotificationDropped, "d31724daabef434c909c9630aee35e7f", sdjournal.PriWarning},
	{StateWriteFailed, "a7e82f365d02485483376258c5c55022", sdjournal.PriWarning},
}

// Kinds returns every event kind, in documentation order.
func Kinds() []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		out[i] = k.kind
	}
	return out
}

func (k Kind) info() (kindInfo, bool) {
	for _, i := range kinds {
		if i.kind == k {
			return i, true
		}
	}
	return kindInfo{}, false
}

// MessageID is the kind's stable journald MESSAGE_ID.
func (k Kind) MessageID() string { i, _ := k.info(); return i.id }

// Priority is the syslog priority events of this kind carry.
func (k Kind) Priority() sdjournal.Priority {
	if i, ok := k.info(); ok {
		return i.priority
	}
	return sdjournal.PriNotice
}

// Level is the notification level of the kind: error, warning or info.
func (k Kind) Level() string { return PriorityLevel(int(k.Priority())) }

// PriorityLevel names a syslog priority the way bm2's events do.
func PriorityLevel(p int) string {
	switch {
	case p <= int(sdjournal.PriErr):
		return "error"
	case p == int(sdjournal.PriWarning):
		return "warning"
	}
	return "info"
}

// Event is one thing bm2 did or found.
type Event struct {
	Kind     Kind
	Project  string
	Instance string // "api-0"; "" for project-wide events
	Reason   reason.Reason
	Message  string // one line for a person
	Detail   string // more for a person, optional
	Time     time.Time

	Port          int    // BM2_PORT, 0 if none
	Invocation    string // BM2_INVOCATION: the instance run the event is about
	ServiceResult string // BM2_SERVICE_RESULT
	ExitStatus    string // BM2_EXIT_STATUS
	Signal        string // BM2_SIGNAL, e.g. SIGKILL
	Restarts      string // BM2_RESTARTS
	Path          string // BM2_PATH: the file not written (state_write_failed)
	Errno         string // BM2_ERRNO: why, e.g. ENOSPC; "" when the error had none
	Memory        uint64 // BM2_MEMORY: bytes (memory_restart), 0 if none
	MemoryLimit   uint64 // BM2_MEMORY_RESTART: bytes, 0 if none

	MessageID string // on decoded events: MESSAGE_ID as logged
	Level     string // on decoded events: BM2_LEVEL (or from PRIORITY)
}

// Sink receives events.
type Sink interface {
	Emit(Event) error
}

// Journald sends events to the system journal. When journald is not
// reachable it writes them to Fallback (stderr of the calling unit, which
// systemd files in the journal too).
type Journald struct {
	Fallback *os.File
	// Send writes each entry (tests); nil: [Send], when journald is
	// [Reachable].
	Send Sender
}

// Emit sends one event: [EventEntry], through [SendEntry].
func (j Journald) Emit(e Event) error {
	send := j.Send
	if send == nil && Reachable() {
		send = Send
	}
	if send != nil {
		if err := SendEntry(context.Background(), send, EventEntry(e)); err == nil {
			return nil
		}
	}
	if j.Fallback != nil {
		_, err := fmt.Fprintf(j.Fallback, "bm2: %s %s\n", e.Message, logfmt(Fields(e)))
		return err
	}
	return fmt.Errorf("journald not reachable")
}

// Sender writes one entry to journald, as [Send] does.
type Sender func(ctx context.Context, message string, priority int, vars map[string]string) error

// EventEntry is every field [Journald.Emit] sends for e: [Fields], with
// MESSAGE and PRIORITY. Its keys are among [EventFields].
func EventEntry(e Event) Entry {
	entry := Entry(Fields(e))
	entry[FieldMessage] = e.Message
	entry[FieldPriority] = strconv.Itoa(int(e.Kind.Priority()))
	return entry
}

// SendEntry sends entry through send: its MESSAGE and PRIORITY as the
// message and the priority, every other field as it is. A PRIORITY that
// is not a syslog priority (0 to 7) is refused.
func SendEntry(ctx context.Context, send Sender, entry Entry) error {
	p, err := ParsePriority(entry[FieldPriority])
	if err != nil {
		return err
	}
	vars := make(map[string]string, len(entry))
	for k, v := range entry {
		if k != FieldMessage && k != FieldPriority {
			vars[k] = v
		}
	}
	return send(ctx, entry[FieldMessage], p, vars)
}

// ParsePriority reads a PRIORITY field: one digit, 0 (emerg) to 7 (debug).
func ParsePriority(s string) (int, error) {
	if len(s) != 1 || s[0] < '0' || s[0] > '7' {
		return 0, fmt.Errorf("%s %q is not a syslog priority (0 to 7)", FieldPriority, s)
	}
	return int(s[0] - '0'), nil
}

// eventFields is every field an event's entry may carry (EventEntry).
var eventFields = []string{
	FieldIdentifier, FieldMessage, FieldMessageID, FieldPriority, FieldEvent, FieldProject,
	FieldInstance, FieldReason, FieldLevel, FieldDetail, FieldPort, FieldInvocation,
	FieldServiceResult, FieldExitStatus, FieldSignal, FieldRestarts, FieldPath, FieldErrno,
}

// EventFields is every field the entry of an event may carry, as
// [EventEntry] makes it: what a reader of events written elsewhere
// (package relay) accepts, and nothing journald sets itself.
func EventFields() []string { return append([]string(nil), eventFields...) }

// IsEventField tells whether name is one of [EventFields].
func IsEventField(name string) bool { return slices.Contains(eventFields, name) }

// KnownKind tells whether k is one of the kinds bm2 emits.
func KnownKind(k Kind) bool { _, ok := k.info(); return ok }

// Reachable tells whether journald's native socket takes entries.
func Reachable() bool { return sdjournal.Enabled() }

// sendEntry writes one entry to journald's native socket; tests replace it.
var sendEntry = sdjournal.Send

// Send writes one entry to journald: message as MESSAGE, priority (a
// syslog priority, 0 to 7) as PRIORITY, and vars. It is bm2's one writer
// to journald: [Journald.Emit] sends events through it, the generator its
// messages where there is no /dev/kmsg.
//
// Send gives up when ctx ends, so that a journald that does not read its
// socket cannot stall the caller (the generator bounds each message: it
// runs under PID 1). The entry given up on is not withdrawn: it still
// reaches journald if journald reads its socket before the process exits.
func Send(ctx context.Context, message string, priority int, vars map[string]string) error {
	send := sendEntry
	if ctx.Done() == nil {
		return send(message, sdjournal.Priority(priority), vars)
	}
	sent := make(chan error, 1)
	go func() { sent <- send(message, sdjournal.Priority(priority), vars) }()
	select {
	case err := <-sent:
		return err
	case <-ctx.Done():
		return fmt.Errorf("journald took no entry: %w", ctx.Err())
	}
}

// Fields is the journal fields of an event, MESSAGE and PRIORITY aside.
func Fields(e Event) map[string]string {
	vars := map[string]string{
		FieldIdentifier: Identifier,
		FieldEvent:      string(e.Kind),
		FieldProject:    e.Project,
		FieldLevel:      e.Kind.Level(),
	}
	set := func(k, v string) {
		if v != "" {
			vars[k] = v
		}
	}
	set(FieldMessageID, e.Kind.MessageID())
	set(FieldInstance, e.Instance)
	set(FieldReason, string(e.Reason))
	set(FieldDetail, e.Detail)
	if e.Port != 0 {
		set(FieldPort, strconv.Itoa(e.Port))
	}
	set(FieldInvocation, e.Invocation)
	set(FieldServiceResult, e.ServiceResult)
	set(FieldExitStatus, e.ExitStatus)
	set(FieldSignal, e.Signal)
	set(FieldRestarts, e.Restarts)
	set(FieldPath, e.Path)
	set(FieldErrno, e.Errno)
	if e.Memory != 0 {
		set(FieldMemory, strconv.FormatUint(e.Memory, 10))
	}
	if e.MemoryLimit != 0 {
		set(FieldMemoryLimit, strconv.FormatUint(e.MemoryLimit, 10))
	}
	return vars
}

// Entry is one journal entry: its fields as journalctl -o json prints them
// (binary values decoded, the first of repeated fields).
type Entry map[string]string

// Time is when the entry was logged (__REALTIME_TIMESTAMP).
func (e Entry) Time() time.Time {
	us, err := strconv.ParseInt(e[FieldRealtime], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

// Trusted tells whether an entry can only have come from bm2 itself: it
// carries bm2's identifier and was sent by root (journald sets _UID from
// the sender's socket credentials; a sender cannot set fields that start
// with "_"), or it came through the kernel's log, which only root can
// write (the generator logs to /dev/kmsg). An app, whatever it logs,
// cannot produce a trusted entry unless it runs as root.
func Trusted(e Entry) bool { return TrustedFrom(e, "0") }

// TrustedFrom is [Trusted] for the scope whose bm2 runs as uid (decimal):
// "0" in system scope; in user scope the user's own UID, since the user's
// manager runs bm2-probe as the user. There the app is the user, and what
// it logs as bm2 it could as well do: user scope believes entries with
// SYSLOG_IDENTIFIER=bm2 and _UID=<the user> (see bm2(1), USER SCOPE).
func TrustedFrom(e Entry, uid string) bool {
	if e[FieldIdentifier] != Identifier {
		return false
	}
	if uid != "0" {
		return e[FieldUID] == uid
	}
	return e[FieldUID] == "0" || e[FieldTransport] == "kernel"
}

// Decode reads one of bm2's events (or generator messages, which have no
// Kind) back from a journal entry. ok is false for an entry bm2 did not
// write itself (see [Trusted]).
func Decode(e Entry) (ev Event, ok bool) { return DecodeFrom(e, "0") }

// DecodeFrom is [Decode] for the scope whose bm2 runs as uid (see
// [TrustedFrom]).
func DecodeFrom(e Entry, uid string) (ev Event, ok bool) {
	if !TrustedFrom(e, uid) {
		return Event{}, false
	}
	ev = Event{
		Kind:          Kind(e[FieldEvent]),
		Project:       e[FieldProject],
		Instance:      e[FieldInstance],
		Reason:        reason.Reason(e[FieldReason]),
		Message:       e[FieldMessage],
		Detail:        e[FieldDetail],
		Time:          e.Time(),
		Invocation:    e[FieldInvocation],
		ServiceResult: e[FieldServiceResult],
		ExitStatus:    e[FieldExitStatus],
		Signal:        e[FieldSignal],
		Restarts:      e[FieldRestarts],
		Path:          e[FieldPath],
		Errno:         e[FieldErrno],
		MessageID:     e[FieldMessageID],
		Level:         e[FieldLevel],
	}
	ev.Port, _ = strconv.Atoi(e[FieldPort])
	ev.Memory, _ = strconv.ParseUint(e[FieldMemory], 10, 64)
	ev.MemoryLimit, _ = strconv.ParseUint(e[FieldMemoryLimit], 10, 64)
	if ev.Level == "" {
		if p, err := strconv.Atoi(e[FieldPriority]); err == nil {
			ev.Level = PriorityLevel(p)
		}
	}
	return ev, true
}

func logfmt(vars map[string]string) string {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + quoteIfNeeded(vars[k])
	}
	return strings.Join(parts, " ")
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"=\n") {
		return strconv.Quote(s)
	}
	return s
}
