package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/portfence"
	"github.com/bm2dev/bm2/units"
)

// fenceAllowed says what an instance of p may bind, for the fence line:
// "port 3000", "port 3000+i", with "and 9229, 9100" for extra_ports.
func fenceAllowed(p *config.Project) string {
	if p.IsWorker() {
		return "an ephemeral port" + extraPortsText(p) + " (a worker has no port of its own)"
	}
	s := "port " + strconv.Itoa(p.Port)
	if p.Mode == config.Fork && p.Instances > 1 {
		s += "+i"
	}
	return s + extraPortsText(p)
}

// extraPortsText is " and extra_ports 9229, 9100", or "" without any.
func extraPortsText(p *config.Project) string {
	if len(p.Sandbox.ExtraPorts) == 0 {
		return ""
	}
	extra := make([]string, len(p.Sandbox.ExtraPorts))
	for i, n := range p.Sandbox.ExtraPorts {
		extra[i] = strconv.Itoa(n)
	}
	return " and extra_ports " + strings.Join(extra, ", ")
}

// fenceLine is the one line bm2 check and bm2 status print about the port
// fence (package portfence): whether each instance is kept to its own
// ports, and if not, why. statuses are the instances' units (status,
// which checks the running ones' cgroups when it may), nil for check.
func (a *App) fenceLine(p *config.Project, statuses []UnitStatus) string {
	if a.c.Scope().IsUser() {
		return "ports: not fenced (" + portfence.UserScopeReason + "): an instance can bind any free port of 1024 or more"
	}
	if err := a.c.FenceSupport(); err != nil {
		return "ports: not fenced (" + err.Error() + "): an instance can bind any free port"
	}
	allowed := fenceAllowed(p)
	var running, unfenced []string
	unknown := false
	for i, u := range statuses {
		if !u.Running() || u.ControlGroup == "" {
			continue
		}
		id := units.InstanceID(p.Name, i)
		running = append(running, id)
		ok, err := a.c.FenceAttached(u.ControlGroup)
		switch {
		case errors.Is(err, fs.ErrPermission):
			unknown = true
		case err != nil || !ok:
			unfenced = append(unfenced, id)
		}
	}
	switch {
	case len(unfenced) > 0:
		return fmt.Sprintf("ports: NOT fenced on %s (no fence on its cgroup; its journal says why: `bm2 logs %s`); the others may bind only %s",
			strings.Join(unfenced, ", "), p.Name, allowed)
	case unknown:
		return "ports: fenced at each start: an instance may bind only " + allowed + " (run as root to see the fence on the running instances)"
	case len(running) > 0:
		return "ports: fenced: an instance may bind only " + allowed + " (checked on " + strings.Join(running, ", ") + ")"
	}
	return "ports: fenced at each start: an instance may bind only " + allowed
}
