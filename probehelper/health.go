package probehelper

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/layout"
)

// healthCommand is `bm2-probe health <project>`, as
// bm2-<project>-health.service runs it (root in system scope, the user
// in user scope): c has its events, crash logs, clock and log; the rest
// comes from the scope and systemd. A run stopped with its project
// (SIGTERM: the service is PartOf= the target) ends quietly.
func healthCommand(ctx context.Context, args []string, c *health.Checker, scope layout.Layout) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: bm2-probe health PROJECT (as bm2-PROJECT-health.service runs it)")
	}
	if !config.ValidName(args[1]) {
		return fmt.Errorf("%q is not a project name", args[1])
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find bm2-probe for the check: %w", err)
	}
	bus, err := Connect(ctx, scope)
	if err != nil {
		return err
	}
	defer bus.Close()
	c.Project, c.Systemd, c.Dir = args[1], bus, scope.HealthDir(args[1])
	c.Check = health.ChildCheck(filepath.Clean(self))
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
