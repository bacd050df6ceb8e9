package relay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/journal"
)

// Sink relays events through the spool: each one a file, which
// bm2-events.service sends to journald. When it cannot (see the package
// comment) it sends the event to Direct, the journal, as if there were no
// relay, and says why on Log.
type Sink struct {
	Spool Spool
	// Direct is where an event goes that cannot be relayed:
	// journal.Journald.
	Direct journal.Sink
	// Log is the calling unit's stderr: a line for each event sent
	// directly for a reason other than a spool that does not exist.
	Log io.Writer
	// SinceBoot is the clock of the files' names (nil: CLOCK_BOOTTIME,
	// which never steps back and is the same in every process).
	SinceBoot func() time.Duration
	// Pid names the writer in the files' names (nil: os.Getpid).
	Pid func() int
	// MaxFiles and MaxBytes bound the spool (0: MaxFiles, MaxBytes).
	MaxFiles int
	MaxBytes int64
}

// NewSink is the relay of scope (its EventsDir, owned by its UID), with the
// journal, falling back to log, as Direct.
func NewSink(scope layout.Layout, log *os.File) Sink {
	return Sink{
		Spool:  Spool{Dir: scope.EventsDir, Owner: scope.UID},
		Direct: journal.Journald{Fallback: log},
		Log:    log,
	}
}

// seq counts the events this process has written, so that two of the
// same nanosecond keep their order.
var seq atomic.Uint64

// SinceBoot is CLOCK_BOOTTIME: the time since boot, suspend included.
func SinceBoot() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// Emit relays e, or sends it directly when it cannot.
func (s Sink) Emit(e journal.Event) error {
	err := s.relay(e)
	if err == nil {
		return nil
	}
	derr := s.Direct.Emit(e)
	var werr *writeError
	switch {
	case errors.Is(err, errNoSpool):
		// No probe has made the spool yet: sent as before the relay.
	case errors.As(err, &werr):
		s.logf("bm2: %s of %s sent to journald directly: %v\n", e.Kind, who(e), err)
		if rerr := journal.ReportWriteFailure(s.Direct, e.Project, e.Instance, s.Spool.Dir, werr.err,
			fmt.Sprintf("%s went to journald directly, where an app that floods its output can crowd it out", e.Kind)); rerr != nil {
			s.logf("bm2: %v\n", rerr)
		}
	default:
		s.logf("bm2: %s of %s sent to journald directly: %v\n", e.Kind, who(e), err)
	}
	return derr
}

// writeError is a spool file that could not be written.
type writeError struct{ err error }

func (w *writeError) Error() string { return w.err.Error() }

// relay writes e into the spool, or says why it did not.
func (s Sink) relay(e journal.Event) error {
	entry := journal.EventEntry(e)
	if unit := unitOf(e.Instance); unit != "" {
		entry[s.Spool.objectField()] = unit
	}
	data, err := encode(entry)
	if err != nil {
		return err
	}
	if len(data) > MaxFileSize {
		return fmt.Errorf("it takes %d bytes, more than the relay's %d", len(data), MaxFileSize)
	}
	if err := s.Spool.check(); err != nil {
		return err
	}
	w, err := s.Spool.list()
	if err != nil {
		return &writeError{err}
	}
	maxFiles, maxBytes := s.MaxFiles, s.MaxBytes
	if maxFiles <= 0 {
		maxFiles = MaxFiles
	}
	if maxBytes <= 0 {
		maxBytes = MaxBytes
	}
	if len(w.names) >= maxFiles || w.bytes+int64(len(data)) > maxBytes {
		return fmt.Errorf("the relay spool %s holds %d events (%d bytes), the most it keeps; is %s running?",
			s.Spool.Dir, len(w.names), w.bytes, ServiceUnit)
	}
	now := s.sinceBoot()
	if len(w.names) > 0 {
		if oldest, _ := parseName(w.names[0]); now-oldest > StaleAfter {
			return fmt.Errorf("the oldest event in the relay spool %s has waited %v: nothing is draining it (`systemctl start %s`)",
				s.Spool.Dir, (now - oldest).Round(time.Second), TimerUnit)
		}
	}
	pid := os.Getpid()
	if s.Pid != nil {
		pid = s.Pid()
	}
	name := fileName(now, pid, seq.Add(1))
	if err := safefs.Write(filepath.Join(s.Spool.Dir, name), data, 0o600); err != nil {
		return &writeError{err}
	}
	return nil
}

func (s Sink) sinceBoot() time.Duration {
	if s.SinceBoot != nil {
		return s.SinceBoot()
	}
	return SinceBoot()
}

func (s Sink) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, format, args...)
	}
}

// who names what an event is about: its instance, or its project.
func who(e journal.Event) string {
	if e.Instance != "" {
		return e.Instance
	}
	if e.Project != "" {
		return e.Project
	}
	return "bm2"
}
