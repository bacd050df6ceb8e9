package control

import (
	"fmt"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/units"
)

// clearErrored removes a project's errored mark in scope l, saying so to
// r, and reports whether there was one.
func clearErrored(l layout.Layout, r Reporter, name string) (bool, error) {
	reason, errored, err := l.State().ErroredMark(name)
	if err != nil {
		return false, fmt.Errorf("read errored state of %s: %w", name, err)
	}
	if !errored {
		return false, nil
	}
	if err := l.State().ClearErrored(name); err != nil {
		return false, rootHint(l, err)
	}
	say(r, "cleared errored state of %s (was: %s)", name, reason)
	return true, nil
}

// startErr filters the error of a start job. When the reusePort probe stops
// the project while its start job still waits (it replaces that job), the
// job ends "canceled"; the project is then errored, and waitOnline explains
// why better than "job canceled" would (the mark is scope l's).
func startErr(l layout.Layout, project string, err error) error {
	if err == nil {
		return nil
	}
	if _, errored, _ := l.State().ErroredMark(project); errored {
		return nil
	}
	return err
}

// clearInstanceMarks removes the errored marks of p's instances ids (all
// of them, the surge's too, when ids is nil) in scope l, saying so to r
// for each.
func clearInstanceMarks(l layout.Layout, r Reporter, p *config.Project, ids []int) error {
	var names []string
	if ids == nil {
		marked, err := l.State().ErroredInstances(p.Name)
		if err != nil {
			return fmt.Errorf("read errored state of %s's instances: %w", p.Name, err)
		}
		names = marked
	} else {
		for _, i := range ids {
			names = append(names, units.InstanceID(p.Name, i))
		}
	}
	for _, n := range names {
		m, ok := l.State().InstanceMark(n)
		if !ok {
			continue
		}
		if err := l.State().ClearInstanceErrored(n); err != nil {
			return rootHint(l, err)
		}
		say(r, "cleared errored state of %s (was: %s)", n, m.Reason)
	}
	return nil
}
