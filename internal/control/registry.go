package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/scope"
)

// Projects is the scope's registered projects (registry.Store): where
// their files are ($BM2_CONFIG_PATH when set, else the scope's own
// layout.Layout.SearchPath), how they parse, and how a project dir's
// file is read.
func (c *Client) Projects() registry.Store {
	l := c.Scope().Layout()
	sp := append([]string(nil), l.SearchPath...)
	if c.Getenv(config.SearchPathEnv) != "" {
		sp = config.SearchPath(c.Getenv)
	}
	return registry.Store{Layout: l, SearchPath: sp, Options: c.Scope().Options(),
		SystemSearchPath: c.SystemSearchPath, ReadFile: c.ReadFile}
}

// lockRegistry takes the registry lock of scope l (registry.Lock),
// waiting for it while another command holds it (saying once, as an
// aside to r, that it waits, and for which PID), until ctx ends or
// timeout (when positive) passes. The returned function releases it;
// calling it more than once is harmless.
func lockRegistry(ctx context.Context, l layout.Layout, r Reporter, timeout time.Duration) (unlock func(), err error) {
	if err := scope.EnsureUserDirs(l); err != nil {
		return nil, rootHint(l, err)
	}
	unlock, err = registry.Lock(ctx, l.LockFile, timeout, func(holder string) {
		aside(r, "waiting for another bm2 command that changes the registered projects%s", holder)
	})
	var werr *registry.WaitError
	switch {
	case errors.As(err, &werr) && errors.Is(werr, context.DeadlineExceeded):
		return nil, fail(Failed, "nothing was changed; run the command again once the other one has finished", err)
	case errors.As(err, &werr):
		return nil, withFix(err, "nothing was changed; run the command again to finish")
	case err != nil:
		return nil, rootHint(l, err)
	}
	return unlock, nil
}

// lockProject takes the reload lock of the project of scope l, or says
// who has it.
func lockProject(l layout.Layout, name string) (*registry.ProjectLock, error) {
	lock, holder, err := registry.TryLockProject(l, name)
	if err != nil || lock != nil {
		return lock, rootHint(l, err)
	}
	who := "another bm2 command"
	if holder > 0 {
		who += fmt.Sprintf(" (pid %d)", holder)
	}
	return nil, fail(Failed, "wait for it to finish, then try again",
		fmt.Errorf("%s is reloading or scaling %s", who, name))
}

// newRegistration is registry.New in scope l, with its parse options.
func newRegistration(l layout.Layout, opts config.Options, p *config.Project) (*registry.Registration, error) {
	r, err := registry.New(p, opts)
	return r, rootHint(l, err)
}
