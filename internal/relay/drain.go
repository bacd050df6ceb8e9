package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/bm2dev/bm2/journal"
)

// Drainer empties a spool into journald: the reusePort probe of every
// instance start (`bm2-probe PROJECT-INDEX`), the failure hook (`bm2-probe
// failed`) and `bm2-probe events` (bm2-events.service, which
// bm2-events.timer starts while events wait), each from a unit of its own.
type Drainer struct {
	Spool Spool
	// Send writes each entry to journald (nil: journal.Send); tests
	// replace it.
	Send journal.Sender
	// Log gets a line for each file refused and one for the run.
	Log io.Writer
	// Backoff is the waits between attempts at an entry journald does
	// not take (nil: DefaultBackoff); After is their clock (nil:
	// time.After).
	Backoff []time.Duration
	After   func(time.Duration) <-chan time.Time
	// Now tells the age of a temporary file (nil: time.Now).
	Now func() time.Time
}

// DefaultBackoff is how often an entry journald refused is tried again
// before the run gives up, leaving it, and what follows it, for the next.
var DefaultBackoff = []time.Duration{100 * time.Millisecond, time.Second, 5 * time.Second}

// tempGrace is how long a write under way (safefs.Write's temporary file)
// is waited for; an older one is left over from a writer that died, and
// removed.
const tempGrace = 10 * time.Second

// tempPoll is how often the drainer looks again while only writes under
// way are left.
const tempPoll = 20 * time.Millisecond

// Result counts what a run did.
type Result struct {
	Relayed, Refused int
}

// Run sends every event in the spool to journald in name order (the order
// they were emitted), each removed once sent, and the ones that arrive
// meanwhile too; it returns when the spool is empty. Anything that is not
// an event bm2 wrote is refused: said on Log and removed, never sent. An
// entry journald does not take is tried again (Backoff); then the run
// ends with an error and leaves it, and what follows it, in the spool.
func (d Drainer) Run(ctx context.Context) (Result, error) {
	var res Result
	if err := d.Spool.check(); err != nil {
		if errors.Is(err, errNoSpool) {
			return res, nil
		}
		return res, err
	}
	// One drainer at a time (each probe, each failure hook and the
	// timer's service drain), so that no event is sent twice and they go
	// in order: the lock is the spool directory's own flock.
	unlock, err := d.Spool.lock(ctx)
	if err != nil {
		return res, err
	}
	defer unlock()
	log := d.Log
	if log == nil {
		log = io.Discard
	}
	stuck := map[string]bool{} // could not be removed: never again in this run
	var errs []error
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		w, err := d.Spool.list()
		if err != nil {
			return res, fmt.Errorf("the relay spool %s: %v", d.Spool.Dir, err)
		}
		did, pending := false, false
		for _, name := range w.names {
			if stuck[name] {
				continue
			}
			did = true
			entry, err := d.Spool.read(name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				res.Refused++
				if rerr := d.remove(name, stuck); rerr != nil {
					fmt.Fprintf(log, "refused %v; could not remove it: %v\n", err, rerr)
					errs = append(errs, rerr)
				} else {
					fmt.Fprintf(log, "refused %v; removed\n", err)
				}
				continue
			}
			if err := d.send(ctx, entry); err != nil {
				fmt.Fprintf(log, "%d events relayed, %d refused\n", res.Relayed, res.Refused)
				return res, fmt.Errorf("journald did not take %s (left for the next run): %w", filepath.Join(d.Spool.Dir, name), err)
			}
			res.Relayed++
			if err := d.remove(name, stuck); err != nil {
				errs = append(errs, fmt.Errorf("%s was relayed but could not be removed: %w", filepath.Join(d.Spool.Dir, name), err))
			}
		}
		for _, e := range w.other {
			name := e.Name()
			if stuck[name] {
				continue
			}
			did = true
			res.Refused++
			why := fmt.Sprintf("%s is not an event bm2 wrote (its names are TIME-PID-SEQ.json)", filepath.Join(d.Spool.Dir, name))
			if !e.Type().IsRegular() {
				why = fmt.Sprintf("%s is %s, not a regular file", filepath.Join(d.Spool.Dir, name), what(e.Type()))
			}
			if err := d.remove(name, stuck); err != nil {
				fmt.Fprintf(log, "refused %s; could not remove it: %v\n", why, err)
				errs = append(errs, err)
			} else {
				fmt.Fprintf(log, "refused %s; removed\n", why)
			}
		}
		for _, name := range w.temps {
			if stuck[name] {
				continue
			}
			st, err := os.Lstat(filepath.Join(d.Spool.Dir, name))
			if err != nil {
				continue
			}
			if age := d.now().Sub(st.ModTime()); age < tempGrace {
				pending = true
				continue
			}
			did = true
			if err := d.remove(name, stuck); err != nil {
				errs = append(errs, err)
			} else {
				fmt.Fprintf(log, "removed %s, left over from a write that never ended\n", filepath.Join(d.Spool.Dir, name))
			}
		}
		if did {
			continue
		}
		if !pending {
			break
		}
		// Only writes under way: wait for them here, rather than leave
		// them to the next drain.
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-d.after(tempPoll):
		}
	}
	fmt.Fprintf(log, "%d events relayed, %d refused\n", res.Relayed, res.Refused)
	return res, errors.Join(errs...)
}

// send writes one entry to journald, trying again as Backoff says.
func (d Drainer) send(ctx context.Context, entry journal.Entry) error {
	send := d.Send
	if send == nil {
		send = journal.Send
	}
	backoff := d.Backoff
	if backoff == nil {
		backoff = DefaultBackoff
	}
	var err error
	for attempt := 0; ; attempt++ {
		if err = journal.SendEntry(ctx, send, entry); err == nil {
			return nil
		}
		if attempt >= len(backoff) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-d.after(backoff[attempt]):
		}
	}
}

// remove removes a spool entry (a directory with what is in it: the spool
// is the owner's alone, and nothing in it is followed); one that cannot
// be removed is stuck for the rest of the run.
func (d Drainer) remove(name string, stuck map[string]bool) error {
	err := os.RemoveAll(filepath.Join(d.Spool.Dir, name))
	if err != nil {
		stuck[name] = true
	}
	return err
}

func (d Drainer) after(t time.Duration) <-chan time.Time {
	if d.After != nil {
		return d.After(t)
	}
	return time.After(t)
}

func (d Drainer) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}
