package wait

import (
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/view"
)

// What a caller reads of a Waiter and tells it: the explanation of a
// failure or a timeout is the caller's (it words why, from the reasons'
// table and the logs), from what the wait saw.

// Project is the project waited for.
func (w *Waiter) Project() *config.Project { return w.p }

// IDs are the instances waited for.
func (w *Waiter) IDs() []int { return w.ids }

// Mode is what the wait waits for.
func (w *Waiter) Mode() Mode { return w.mode }

// Back makes an UntilBack wait one for a restart of the run before: with
// checkListen (it listened before), the new run must listen again.
func (w *Waiter) Back(before view.UnitStatus, checkListen bool) {
	w.before = before
	w.checkListen = checkListen
	w.listening = !checkListen
}

// WaitingFor says, for a timeout, what an UntilBack wait was still
// waiting for.
func (w *Waiter) WaitingFor() string { return w.waitingFor() }

// Listened, Judged and HealthyNow say, per instance of last (the states
// last read), whether it was seen listening, judged by the probe, and
// answering healthy.
func (w *Waiter) Listened(last []view.UnitStatus) []bool { return w.listened(last) }
func (w *Waiter) Judged(last []view.UnitStatus) []bool   { return w.judged(last) }
func (w *Waiter) HealthyNow(last []view.UnitStatus) []bool {
	return w.healthyNow(last)
}

// HealthWait and HealthWord say, for a timeout, what instance k's health
// check was waited for and what it last said.
func (w *Waiter) HealthWait(k int, u view.UnitStatus) string { return w.healthWait(k, u) }
func (w *Waiter) HealthWord(k int, u view.UnitStatus) string { return w.healthWord(k, u) }
