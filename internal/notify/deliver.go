package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/bm2dev/bm2/journal"
)

// Policy is how hard each notification is tried.
type Policy struct {
	Timeout     time.Duration   // one attempt
	Backoff     []time.Duration // the waits between attempts: len+1 attempts
	Concurrency int             // notifications of one project being posted at once
	Poll        time.Duration   // how often the spool is looked at while deliveries are under way
}

// DefaultPolicy is documented in bm2.toml(5): 5 attempts of 3 s at most,
// 1, 2, 4 and 8 s apart; 31 s in all for a receiver that never answers.
var DefaultPolicy = Policy{
	Timeout:     DefaultWebhookTimeout,
	Backoff:     []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
	Concurrency: 4,
	Poll:        250 * time.Millisecond,
}

// Attempts is how many times a notification is tried at most.
func (p Policy) Attempts() int { return len(p.Backoff) + 1 }

// Deliverer empties a spool: `bm2-probe notify`, bm2-notify.service.
type Deliverer struct {
	Spool  Spool
	Policy Policy
	// Client posts every notification (tests); nil: one through
	// Transport, with this host (loopback and its own addresses) allowed
	// only for the notifications that allow it.
	Client *http.Client
	Log    io.Writer // one line per notification delivered or dropped
	// Events records each notification given up (notification_dropped):
	// the journal itself, never a notify.Sink (that would notify again).
	Events journal.Sink
	// After is the clock of the waits between attempts (nil: time.After).
	After func(time.Duration) <-chan time.Time
}

// Result counts what a run did.
type Result struct {
	Delivered, Dropped int
}

type outcome struct {
	name      string
	delivered bool
	stopped   bool // the run was stopped first: it stays for the next one
	removeErr error
}

// Run delivers every notification in the spool, the ones that arrive
// meanwhile too, each on its own (a receiver that hangs delays only its
// own), and returns once the spool is empty. Stopped (ctx), it returns at
// once and leaves what is not delivered for its next run.
func (d Deliverer) Run(ctx context.Context) (Result, error) {
	var res Result
	p := d.Policy
	if p.Attempts() == 0 || p.Timeout <= 0 {
		p = DefaultPolicy
	}
	conc := max(p.Concurrency, 1)
	poll := p.Poll
	if poll <= 0 {
		poll = DefaultPolicy.Poll
	}
	log := d.Log
	if log == nil {
		log = io.Discard
	}
	inflight := map[string]bool{}
	stuck := map[string]bool{} // could not be removed: never again in this run
	done := make(chan outcome)
	// Each project has its own slots: one project's dead webhook holds
	// only its own.
	slots := map[string]chan struct{}{}
	clients := d.clients()
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		for range inflight {
			<-done
		}
	}()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var errs []error
	for {
		names, err := d.Spool.List()
		if err != nil {
			return res, fmt.Errorf("the notification spool %s: %v", d.Spool.Dir, err)
		}
		for _, name := range names {
			if inflight[name] || stuck[name] {
				continue
			}
			inflight[name] = true
			project := ProjectOf(name)
			sem, ok := slots[project]
			if !ok {
				sem = make(chan struct{}, conc)
				slots[project] = sem
			}
			go func() { done <- d.deliver(ctx, p, sem, clients, name, log) }()
		}
		if len(inflight) == 0 {
			return res, errors.Join(errs...)
		}
		select {
		case o := <-done:
			delete(inflight, o.name)
			switch {
			case o.stopped:
			case o.delivered:
				res.Delivered++
			default:
				res.Dropped++
			}
			if o.removeErr != nil {
				stuck[o.name] = true
				errs = append(errs, o.removeErr)
			}
		case <-tick.C:
		case <-ctx.Done():
			return res, nil
		}
	}
}

// clients are the HTTP clients deliveries post through: without and with
// this host allowed (loopback and its own addresses).
func (d Deliverer) clients() [2]*http.Client {
	if d.Client != nil {
		return [2]*http.Client{d.Client, d.Client}
	}
	return [2]*http.Client{{Transport: Transport(false, nil)}, {Transport: Transport(true, nil)}}
}

// deliver tries one notification and removes it unless ctx ended first.
// It holds one of its project's slots (sem) while it posts, never while
// it waits to try again.
func (d Deliverer) deliver(ctx context.Context, p Policy, sem chan struct{}, clients [2]*http.Client, name string, log io.Writer) outcome {
	o := outcome{name: name}
	acquire := func() bool {
		select {
		case sem <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if !acquire() {
		o.stopped = true
		return o
	}
	held := true
	defer func() {
		if held {
			<-sem
		}
	}()
	n, err := d.Spool.Read(name)
	if err != nil {
		fmt.Fprintf(log, "dropped the notification %s: %v\n", name, err)
		o.removeErr = d.Spool.Remove(name)
		return o
	}
	client := clients[0]
	if n.AllowLocal {
		client = clients[1]
	}
	w := Webhook{URL: n.URL, Timeout: p.Timeout, Client: client}
	what := n.Payload.Event + " of " + n.Payload.Project
	if n.Payload.Instance != "" {
		what = n.Payload.Event + " of " + n.Payload.Instance
	}
	shown := RedactURL(n.URL)
	for attempt := 1; ; attempt++ {
		err = w.Post(ctx, n.Payload)
		if ctx.Err() != nil {
			o.stopped = true // it stays for the next run
			return o
		}
		if err == nil {
			fmt.Fprintf(log, "notified %s (%s) to %s, attempt %d of %d\n", what, n.Payload.Time, shown, attempt, p.Attempts())
			o.delivered = true
			break
		}
		var pe *PostError
		if errors.As(err, &pe) && pe.Permanent() {
			d.dropped(n, fmt.Sprintf("gave up notifying %s (%s) to %s at attempt %d: %v; trying again cannot help: "+
				"fix notify.webhook in the project's file; the notification is dropped", what, n.Payload.Time, shown, attempt, err), err, log)
			break
		}
		if attempt >= p.Attempts() {
			d.dropped(n, fmt.Sprintf("gave up notifying %s (%s) to %s after %d attempts: %v; the notification is dropped "+
				"(the event stays in the journal: journalctl -t bm2)", what, n.Payload.Time, shown, attempt, err), err, log)
			break
		}
		// The slot is another notification's while this one waits.
		<-sem
		held = false
		if !d.wait(ctx, p.Backoff[attempt-1]) || !acquire() {
			o.stopped = true
			return o
		}
		held = true
	}
	o.removeErr = d.Spool.Remove(name)
	return o
}

// wait waits d on the deliverer's clock; false when ctx ended first.
func (d Deliverer) wait(ctx context.Context, dur time.Duration) bool {
	if d.After != nil {
		select {
		case <-d.After(dur):
			return true
		case <-ctx.Done():
			return false
		}
	}
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dropped says that a notification was given up: the notification_dropped
// event of its project (in the unit's journal too), or a line when there is
// no event to write.
func (d Deliverer) dropped(n Notification, msg string, err error, log io.Writer) {
	if d.Events != nil && n.Payload.Project != "" {
		e := journal.Event{Kind: journal.NotificationDropped, Project: n.Payload.Project, Instance: n.Payload.Instance,
			Message: msg, Detail: err.Error()}
		if d.Events.Emit(e) == nil {
			return
		}
	}
	fmt.Fprintln(log, msg)
}
