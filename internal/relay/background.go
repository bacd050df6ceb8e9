package relay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/bm2dev/bm2/internal/layout"
)

// Timeout bounds one drain of the spool by a probe or the failure hook: a
// journald that does not take events (the spool keeps them for the next
// drain) must not hold a probe's stop, nor use up the failure hook's
// time.
const Timeout = 5 * time.Second

// DrainQuietly sends to journald what the exit hooks and the port fences
// of scope left in its spool, from the calling unit's cgroup, outside
// every instance's: each probe drains it as it starts, beside its
// instance's start, and the failure hook as it runs, so that no unit has
// to be started for it on a restart's path. It says what it did on out
// only when it did something.
func DrainQuietly(ctx context.Context, scope layout.Layout, out io.Writer) {
	var log bytes.Buffer
	d := Drainer{Spool: Spool{Dir: scope.EventsDir, Owner: scope.UID}, Log: &log}
	res, err := d.Run(ctx)
	if res.Relayed+res.Refused == 0 && err == nil {
		return
	}
	fmt.Fprint(out, log.String())
	if err != nil {
		fmt.Fprintf(out, "events left for %s: %v\n", TimerUnit, err)
	}
}

// Background drains the spool in a goroutine of a probe: once as it
// starts, and once more after each Kick (kicks that come during a drain
// make one more). Each drain is bounded by Timeout on its own, so that a
// SIGTERM does not cut a send in half.
type Background struct {
	kicks chan struct{}
	done  chan struct{} // closed by Stop
	ended chan struct{} // closed when the goroutine has returned
}

// StartBackground starts draining scope's spool, saying what it does on
// out (DrainQuietly); the drains outlive ctx's cancellation.
func StartBackground(ctx context.Context, scope layout.Layout, out io.Writer) *Background {
	b := &Background{kicks: make(chan struct{}, 1), done: make(chan struct{}), ended: make(chan struct{})}
	b.Kick()
	base := context.WithoutCancel(ctx)
	drain := func() {
		dctx, cancel := context.WithTimeout(base, Timeout)
		defer cancel()
		DrainQuietly(dctx, scope, out)
	}
	go func() {
		defer close(b.ended)
		for {
			select {
			case <-b.kicks:
				drain()
			case <-b.done:
				select {
				case <-b.kicks:
					drain()
				default:
				}
				return
			}
		}
	}()
	return b
}

// Kick asks for a drain, without waiting for it.
func (b *Background) Kick() {
	select {
	case b.kicks <- struct{}{}:
	default: // one is asked for already
	}
}

// Stop ends the goroutine after the drain asked for last, and waits.
func (b *Background) Stop() {
	close(b.done)
	<-b.ended
}
