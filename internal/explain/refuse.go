package explain

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
)

// This file is what bm2 serve refuses on what it finds on the host,
// before anything is written, and what it goes on despite.

// Teller is where serve's checks say what they go on despite (Warn) and
// the fix beside it (Aside).
type Teller interface {
	Warn(msg string)
	Aside(msg string)
}

// ForceHint is the end of the fix of what serve refuses on what it
// found on the host, and --force lets through.
const ForceHint = "; `bm2 serve --force` serves it anyway"

// Unfit is serve's refusal of the certain preflight failures of p: a
// user or path that is missing, and unless force, a path the account
// certainly cannot use (the problems, one a line, and the fix; nil when
// there is none). What bm2 cannot be certain of is a warning to t.
func Unfit(ctx context.Context, h Host, t Teller, p *config.Project, force bool) (problems error, fix string) {
	var msgs []string
	var first *Finding
	found := Preflight(ctx, h, p, "")
	for k, f := range found {
		switch {
		case f.Denied && force:
			t.Warn(fmt.Sprintf("%s: %s (--force: serving anyway)", f.Reason, f.Message))
			continue
		case !f.Certain():
			t.Warn(fmt.Sprintf("%s: %s; %s", f.Reason, f.Message, f.Unsure))
			t.Aside(f.FixLine())
			continue
		}
		msgs = append(msgs, string(f.Reason)+": "+f.Message)
		if first == nil {
			first = &found[k]
		}
	}
	if first == nil {
		return nil, ""
	}
	fix = first.FixLine()
	if first.Denied {
		fix += ForceHint
	}
	return errors.New(strings.Join(msgs, "\n")), fix
}

// HeldOff is serve's refusal of p on a port that a listener its
// instances cannot join holds (what bm2 check calls a problem): the
// problems, one a line, and the fix; nil when there is none. With force
// it warns to t and goes on; a port that could not be probed is a
// warning.
func HeldOff(ctx context.Context, h Host, t Teller, p *config.Project, force bool) (problems error, fix string) {
	s := SeePorts(ctx, h, p)
	if s.Err != nil {
		t.Warn(fmt.Sprintf("ports %s could not be probed: %v", p.Ports(), s.Err))
		return nil, ""
	}
	held := Held(ctx, h, p, s)
	if len(held) == 0 {
		return nil, ""
	}
	var msgs []string
	fix = "fix: stop that program, or give " + p.Name + " another `port =` in bm2.toml; then `bm2 serve`"
	for k, hp := range held {
		e, ok := hp.Explained(p, "`bm2 serve`")
		msg := hp.Message(p)
		if ok {
			msg = string(e.Reason) + ": " + e.Message
		}
		if k == 0 && ok {
			fix = e.FixLine()
		}
		if force {
			t.Warn(fmt.Sprintf("%s (--force: serving anyway)", msg))
			continue
		}
		msgs = append(msgs, msg)
	}
	if force {
		return nil, ""
	}
	return errors.New(strings.Join(msgs, "\n")), fix + ForceHint
}
