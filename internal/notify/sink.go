package notify

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/journal"
)

// Sink is the one place bm2's root processes emit events through: it
// passes every event on to Next (the journal) and spools a notification
// for each one at or above its project's [notify] level, read from the
// project's file at that moment (Settings). Spooling never fails the
// emit: a hook that failed for it would fail its unit; the reason goes
// to Log, and to Next as a state_write_failed event (not spooled: it
// would fail the same way).
type Sink struct {
	Next     journal.Sink
	Spool    Spool
	Settings func(project string) config.Notify // ProjectSettings
	Host     func() (string, error)             // os.Hostname
	Now      func() time.Time                   // time.Now
	Log      io.Writer                          // the calling unit's journal (stderr)
}

// NewSink is scope's sink: in system scope the system spool and the
// project files bm2 finds as root (ProjectSettings); in a user's, the
// user's spool (owned by the user) and the user's project files along
// its search path. It passes the events on to next, which is the
// journal when nil (journal.Journald, falling back to log).
func NewSink(scope layout.Layout, log *os.File, next journal.Sink) Sink {
	if next == nil {
		next = journal.Journald{Fallback: log}
	}
	s := Sink{
		Next:     next,
		Spool:    Spool{Dir: scope.NotifyDir},
		Settings: ProjectSettings,
		Host:     os.Hostname,
		Now:      time.Now,
		Log:      log,
	}
	if scope.IsUser() {
		uid, searchPath := scope.UID, scope.SearchPath
		s.Spool.Owner = uid
		s.Settings = func(project string) config.Notify { return SettingsIn(searchPath, project, uid) }
	}
	return s
}

// Emit records e and spools its notification, if any.
func (s Sink) Emit(e journal.Event) error {
	err := s.Next.Emit(e)
	s.enqueue(e)
	return err
}

func (s Sink) enqueue(e journal.Event) {
	// A notification about a notification that failed would only fail
	// the same way.
	if e.Project == "" || s.Settings == nil || e.Kind == journal.NotificationDropped {
		return
	}
	n := s.Settings(e.Project)
	if n.Webhook == "" || !Reaches(e.Kind, string(n.Level)) {
		return
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	if e.Time.IsZero() {
		e.Time = now
	}
	host := ""
	if s.Host != nil {
		host, _ = s.Host()
	}
	log := s.Log
	if log == nil {
		log = io.Discard
	}
	if _, err := s.Spool.Put(Notification{URL: n.Webhook, AllowLocal: n.AllowLocal, Payload: NewPayload(e, host)}, now, log); err != nil {
		fmt.Fprintf(log, "bm2: %s of %s not notified to %s: %v\n", e.Kind, e.Project, RedactURL(n.Webhook), err)
		// Said in the journal only: its own notification would go
		// through the spool that just failed.
		if s.Next != nil {
			if err := journal.ReportWriteFailure(s.Next, e.Project, e.Instance, s.Spool.Dir, err,
				fmt.Sprintf("the notification of %s is not sent to the project's webhook; the event is in the journal", e.Kind)); err != nil {
				fmt.Fprintf(log, "bm2: %v\n", err)
			}
		}
	}
}

// ProjectSettings reads a project's [notify] table from its own file on
// the default search path (no other project's) and its private part; a
// missing or broken file means no notification.
func ProjectSettings(project string) config.Notify {
	return SettingsIn(config.DefaultSearchPath, project, 0)
}

// SettingsIn is ProjectSettings along another search path (a user's,
// uid). notify.allow_local counts only in a file of root's or uid's.
func SettingsIn(dirs []string, project string, uid int) config.Notify {
	src, ok := config.DiscoverOne(dirs, project)
	if !ok {
		return config.Notify{}
	}
	p, err := config.ParseSource(src, config.Options{NumCPU: 1})
	if err != nil {
		return config.Notify{}
	}
	n := p.Notify
	if n.AllowLocal {
		n.AllowLocal = false
		if st, err := os.Stat(src.Path); err == nil {
			sys, ok := st.Sys().(*syscall.Stat_t)
			n.AllowLocal = ok && (sys.Uid == 0 || int(sys.Uid) == uid)
		}
	}
	return n
}
