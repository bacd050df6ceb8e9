package control

import (
	"context"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"strconv"
)

// This file reads what one run of an instance logged (explain.RunLog),
// for a failure of that run.

// runLogWait bounds how long the lines of a run that just ended are
// waited for: journald reads an app's stdout after the app has written
// it, and a process that wrote its error and exited may be seen gone by
// systemd before journald has the error.
const runLogWait = time.Second

// runLog reads what run u of instance unit of p logged (explain.RunLog); ok is
// false when the run is not known, or nothing of it is in the journal.
func (c *Client) runLog(ctx context.Context, p *config.Project, unit string, u view.UnitStatus) (explain.RunLog, bool) {
	q, ok := explain.RunQuery(u)
	if !ok {
		return explain.RunLog{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var entries []journal.Entry
	if err := c.ReadJournal(ctx, q, func(e journal.Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		return explain.RunLog{}, false
	}
	r := explain.RunLogOf(entries, unit, u, trustedUID(c.ScopeLayout()), p.Log.LevelPrefix)
	if len(r.Lines) == 0 {
		return r, false
	}
	r.Whole = runWhole(c.ScopeLayout(), unit, u)
	return r, true
}

// runLogSettled is runLog for a run that has just ended: when none of
// its lines looks like an error yet, it reads again a few times, for up
// to runLogWait, as journald may not have the app's last lines yet.
func (c *Client) runLogSettled(ctx context.Context, p *config.Project, unit string, u view.UnitStatus) (explain.RunLog, bool) {
	r, ok := c.runLog(ctx, p, unit, u)
	if r.First >= 0 {
		return r, ok
	}
	wctx, cancel := c.Clock.WithTimeout(ctx, runLogWait)
	defer cancel()
	tick, stop := c.Clock.Tick(runLogWait / 5)
	defer stop()
	for {
		select {
		case <-wctx.Done():
			return r, ok
		case <-tick:
		}
		if r, ok = c.runLog(ctx, p, unit, u); r.First >= 0 {
			return r, ok
		}
	}
}

// trustedUID is whose journal entries are bm2's in scope l.
func trustedUID(l layout.Layout) string {
	if l.IsUser() {
		return strconv.Itoa(l.UID)
	}
	return "0"
}

// runWhole is the command that shows every line of run u, in scope l.
func runWhole(l layout.Layout, unit string, u view.UnitStatus) string {
	if u.InvocationID == "" || l.IsUser() {
		return l.JournalctlUnit(unit)
	}
	return "journalctl _SYSTEMD_INVOCATION_ID=" + u.InvocationID
}

// runTail is the failure message's quote of run u of instance unit: from
// its first error (explain.RunLog.Text), or, when nothing of the run is in the
// journal, the unit's last lines (logTail).
func (c *Client) runTail(ctx context.Context, p *config.Project, unit string, u view.UnitStatus) string {
	if r, ok := c.runLogSettled(ctx, p, unit, u); ok {
		return r.Text()
	}
	return c.logTail(ctx, unit)
}
