package journal

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
)

// Identifier is the SYSLOG_IDENTIFIER of every bm2 event.
const Identifier = "bm2"

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
)

type kindInfo struct {
	id       string
	priority sdjournal.Priority
}

var kinds = map[Kind]kindInfo{
	ReuseportConfirmed:    {"44f30fffb0214cdeb15b218ca0731307", sdjournal.PriInfo},
	ReuseportMissing:      {"fef51d7506c045a3aca2d41b6586cc18", sdjournal.PriErr},
	ReuseportProbeStopped: {"8e7912016f6042559e9797e5df92efde", sdjournal.PriWarning},
	InstanceCrashed:       {"f2094127a7e2480c9ce5c60d78d83fb2", sdjournal.PriWarning},
	InstanceErrored:       {"8142a04800b24fc794e195b028d94e5e", sdjournal.PriErr},
	RuntimeRejected:       {"a8acedfbdb8643329ebb1f55ce178353", sdjournal.PriErr},
}

// MessageID is the kind's stable journald MESSAGE_ID.
func (k Kind) MessageID() string { return kinds[k].id }

// Priority is the syslog priority events of this kind carry.
func (k Kind) Priority() sdjournal.Priority {
	if info, ok := kinds[k]; ok {
		return info.priority
	}
	return sdjournal.PriNotice
}

// Level is the notification level of the kind: error, warning or info.
func (k Kind) Level() string {
	switch p := k.Priority(); {
	case p <= sdjournal.PriErr:
		return "error"
	case p == sdjournal.PriWarning:
		return "warning"
	}
	return "info"
}

// Event is one thing bm2 did or found.
type Event struct {
	Kind     Kind
	Project  string
	Instance string // "api-0"; "" for project-wide events
	Reason   string // machine-readable, e.g. reuseport_missing
	Message  string // one line for a person
	Detail   string // more for a person, optional
	Time     time.Time
	Fields   map[string]string // extra BM2_* fields, e.g. BM2_PORT
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
}

// Emit sends one event.
func (j Journald) Emit(e Event) error {
	vars := Fields(e)
	if sdjournal.Enabled() {
		if err := sdjournal.Send(e.Message, e.Kind.Priority(), vars); err == nil {
			return nil
		}
	}
	if j.Fallback != nil {
		_, err := fmt.Fprintf(j.Fallback, "bm2: %s %s\n", e.Message, logfmt(vars))
		return err
	}
	return fmt.Errorf("journald not reachable")
}

// Fields is the journal fields of an event, MESSAGE and PRIORITY aside.
func Fields(e Event) map[string]string {
	vars := map[string]string{
		"SYSLOG_IDENTIFIER": Identifier,
		"BM2_EVENT":         string(e.Kind),
		"BM2_PROJECT":       e.Project,
		"BM2_LEVEL":         e.Kind.Level(),
	}
	if id := e.Kind.MessageID(); id != "" {
		vars["MESSAGE_ID"] = id
	}
	if e.Instance != "" {
		vars["BM2_INSTANCE"] = e.Instance
	}
	if e.Reason != "" {
		vars["BM2_REASON"] = e.Reason
	}
	if e.Detail != "" {
		vars["BM2_DETAIL"] = e.Detail
	}
	for k, v := range e.Fields {
		vars[k] = v
	}
	return vars
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
		return fmt.Sprintf("%q", s)
	}
	return s
}
