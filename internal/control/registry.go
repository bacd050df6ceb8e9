package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/scope"
)

// lockRegistry takes the registry lock (registry.Lock), waiting for it
// while another command holds it (saying once on stderr that it waits,
// and for which PID), until ctx ends or timeout (when positive) passes.
// The returned function releases it; calling it more than once is
// harmless.
func (c *Client) lockRegistry(ctx context.Context, timeout time.Duration) (unlock func(), err error) {
	if err := scope.EnsureUserDirs(c.Scope().Layout()); err != nil {
		return nil, c.rootHint(err)
	}
	unlock, err = registry.Lock(ctx, c.Layout.LockFile, timeout, func(holder string) {
		aside(c.Report, "waiting for another bm2 command that changes the registered projects%s", holder)
	})
	var werr *registry.WaitError
	switch {
	case errors.As(err, &werr) && errors.Is(werr, context.DeadlineExceeded):
		return nil, fail(Failed, "nothing was changed; run the command again once the other one has finished", err)
	case errors.As(err, &werr):
		return nil, withFix(err, "nothing was changed; run the command again to finish")
	case err != nil:
		return nil, c.rootHint(err)
	}
	return unlock, nil
}

// TryLockProject takes the project's reload lock without waiting
// (registry.TryLockProject). The lock is nil when another command has
// it; holder is then the pid it wrote, when known.
func (c *Client) TryLockProject(name string) (l *registry.ProjectLock, holder int, err error) {
	l, holder, err = registry.TryLockProject(c.Scope().Layout(), name)
	return l, holder, c.rootHint(err)
}

// lockProject takes the reload lock or says who has it.
func (c *Client) lockProject(name string) (*registry.ProjectLock, error) {
	l, holder, err := c.TryLockProject(name)
	if err != nil || l != nil {
		return l, err
	}
	who := "another bm2 command"
	if holder > 0 {
		who += fmt.Sprintf(" (pid %d)", holder)
	}
	return nil, fail(Failed, "wait for it to finish, then try again",
		fmt.Errorf("%s is reloading or scaling %s", who, name))
}

// newRegistration is registry.New in the scope.
func (c *Client) newRegistration(p *config.Project) (*registry.Registration, error) {
	r, err := registry.New(p, c.Scope().Options())
	return r, c.rootHint(err)
}

// refused is a *registry.Refusal as the bm2 command's error: the
// project file is invalid as it stands.
func refused(err error) error {
	var r *registry.Refusal
	if errors.As(err, &r) {
		return fail(Invalid, r.Hint, r.Err)
	}
	return err
}
