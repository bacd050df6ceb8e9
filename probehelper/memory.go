package probehelper

import (
	"context"
	"fmt"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/memcheck"
	"github.com/bm2dev/bm2/internal/sysd"
)

// memoryCommand is `bm2-probe memory <project>`, as
// bm2-<project>-memory.service runs it (root in system scope, the user in
// user scope).
func memoryCommand(ctx context.Context, args []string, c *memcheck.Checker, scope layout.Layout) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: bm2-probe memory PROJECT (as bm2-PROJECT-memory.service runs it)")
	}
	if !config.ValidName(args[1]) {
		return fmt.Errorf("%q is not a project name", args[1])
	}
	bus, err := Connect(ctx, scope)
	if err != nil {
		return err
	}
	defer bus.Close()
	c.Project, c.Systemd, c.Dir, c.CgroupRoot = args[1], bus, scope.MemoryDir(args[1]), "/sys/fs/cgroup"
	if c.Sleep == nil {
		c.Sleep = sysd.MonotonicClock{}.Sleep
	}
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
