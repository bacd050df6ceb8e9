// Package journaltest is the event recorder the helpers' tests share: a
// journal.Sink that keeps what it is given. Only tests import it.
package journaltest

import (
	"sync"

	"github.com/bm2dev/bm2/journal"
)

// Recorder is a journal.Sink that keeps every event, in order. Got is a
// test's to read once the code under test is done; All reads it while that
// code may still emit.
type Recorder struct {
	mu  sync.Mutex
	Got []journal.Event
}

var _ journal.Sink = (*Recorder)(nil)

// Emit keeps ev.
func (r *Recorder) Emit(ev journal.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Got = append(r.Got, ev)
	return nil
}

// All is a copy of the events so far.
func (r *Recorder) All() []journal.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]journal.Event(nil), r.Got...)
}

// Kinds is the kind of each event so far.
func (r *Recorder) Kinds() []journal.Kind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var k []journal.Kind
	for _, ev := range r.Got {
		k = append(k, ev.Kind)
	}
	return k
}
