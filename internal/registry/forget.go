package registry

import (
	"fmt"
	"os"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/internal/steer"
)

// Forget removes what bm2 keeps of a stopped project of scope l besides
// systemd's units: its registered file (l.RegisteredFile) and private
// part, its errored marks, its health counts, the probe's verdicts and
// its port steering (pinned under steerPins); warn hears what stays.
func Forget(l layout.Layout, steerPins, name string, warn func(format string, args ...any)) error {
	regFile := l.RegisteredFile(name)
	if err := safefs.Remove(regFile); err != nil {
		return fmt.Errorf("remove %s: %w", regFile, err)
	}
	if err := safefs.Remove(config.PrivatePath(regFile)); err != nil {
		return fmt.Errorf("remove %s: %w", config.PrivatePath(regFile), err)
	}
	if err := l.State().ClearErrored(name); err != nil {
		return err
	}
	// The health checks' counts (the service's RuntimeDirectory=, kept
	// between its runs): a project of this name registered later starts
	// without them.
	if l.RunStateDir != "" {
		hdir := l.HealthDir(name)
		if err := safefs.Remove(health.Path(hdir)); err != nil {
			return fmt.Errorf("remove %s: %w", health.Path(hdir), err)
		}
		_ = os.Remove(hdir)
		// The probe's verdict files: a wait of a project registered later
		// under this name never takes them for its own runs (they name
		// theirs), but they are this project's.
		// Not removable (a directory bm2 does not trust): said, and the
		// deletion goes on; they are matched by run, never by name alone.
		if err := relay.NewVerdicts(l).Forget(name); err != nil {
			warn("the probe's verdicts on %s stay: %v", name, err)
		}
	}
	// The port's steering (system scope): the pinned group, which steers
	// on while the port has listeners and goes with the last, and the
	// mark that it was unavailable. A project registered later under
	// this name starts from nothing, on whatever port it has.
	if !l.IsUser() {
		if err := steer.ScopeStore(steerPins, l).Remove(name); err != nil {
			return fmt.Errorf("remove the steering of %s: %w", name, err)
		}
	}
	marked, _ := l.State().ErroredInstances(name)
	for _, n := range marked {
		if err := l.State().ClearInstanceErrored(n); err != nil {
			return err
		}
	}
	return nil
}
