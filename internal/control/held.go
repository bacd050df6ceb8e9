package control

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/units"
)

// PortsSeen is what a project's ports look like to its account: a state
// per port of its range (bm2 check's port lines, and what serve refuses).
type PortsSeen struct {
	Ports  []int
	States []reuseport.PortState
	// ID is who the ports were checked as.
	ID identity.Identity
	// AsSelf: the caller could not take ID and checked them as itself, so
	// that only "free" means the same for the project (whether a held
	// port can be joined depends on who asks).
	AsSelf bool
	// Err: the ports could not be probed.
	Err error
}

// SeePorts probes p's port range as its account would see it.
func (c *Client) SeePorts(ctx context.Context, p *config.Project) PortsSeen {
	var s PortsSeen
	r := p.Ports()
	for port := r.Lo; port <= r.Hi && port > 0; port++ {
		s.Ports = append(s.Ports, port)
	}
	if len(s.Ports) == 0 {
		return s
	}
	id, err := c.ProjectIdentity(ctx, p, true)
	s.ID = id
	if err == nil {
		s.States, err = c.CheckPorts(ctx, id, s.Ports)
	}
	if errors.Is(err, identity.ErrNotPermitted) {
		s.States, err = c.CheckPorts(ctx, identity.Self(), s.Ports)
		s.AsSelf = err == nil
	}
	s.Err = err
	return s
}

// HeldPort is a port of a project that a listener its account cannot
// join holds, and that none of its running instances does: its
// instances cannot listen there.
type HeldPort struct {
	Port int
	// Holder names the listener's process when it is another user's
	// ("python3 (pid 812), uid 65534 (nobody)"); "" when it is not known.
	Holder string
}

// Held is every port of s held by an exclusive listener (one p's account
// cannot join) that is not one of p's running instances. Nothing is
// known to be held when the ports were checked as someone else (AsSelf)
// or not at all.
func (c *Client) Held(ctx context.Context, p *config.Project, s PortsSeen) []HeldPort {
	if s.Err != nil || s.AsSelf {
		return nil
	}
	var held []HeldPort
	var own map[int]bool
	for i, st := range s.States {
		if st != reuseport.Exclusive {
			continue
		}
		if own == nil {
			own = c.OwnPorts(ctx, p.Name)
		}
		if own[s.Ports[i]] {
			continue
		}
		who, _ := c.HolderOf(s.Ports[i], s.ID)
		held = append(held, HeldPort{Port: s.Ports[i], Holder: who})
	}
	return held
}

// Problem is a held port as bm2 check lists it among its problems, and
// serve refuses it: reason, message and fix, again being what to type
// once it is fixed ("`bm2 check`").
func (h HeldPort) Problem(p *config.Project, again string) string {
	if e, ok := h.explain(p, again); ok {
		return ProblemText(e)
	}
	return h.message(p) + ": stop that program or choose another port"
}

// Line is check's line for a held port whose holder is known ("" when
// it is not: the port's state line says it already).
func (h HeldPort) Line(p *config.Project) string {
	if e, ok := h.explain(p, ""); ok {
		return fmt.Sprintf("port %d: %s", h.Port, e.Message)
	}
	return ""
}

// explain is port_in_use, worded, when the holder is known.
func (h HeldPort) explain(p *config.Project, again string) (reason.Explained, bool) {
	if h.Holder == "" {
		return reason.Explained{}, false
	}
	return reason.Explain(reason.PortInUse, reason.Facts{Project: p.Name, Port: h.Port, Detail: h.Holder, Again: again})
}

func (h HeldPort) message(p *config.Project) string {
	return fmt.Sprintf("port %d is held by an exclusive listener that is not one of %s's instances", h.Port, p.Name)
}

// ForceHint is the end of the hint of what serve refuses on what it
// found on the host, and --force lets through.
const ForceHint = "; `bm2 serve --force` serves it anyway"

// heldErr refuses to serve p on a port that a listener its instances
// cannot join holds (what bm2 check calls a problem), before anything is
// written; with force it warns and goes on. A port that could not be
// probed is a warning.
func (c *Client) heldErr(ctx context.Context, p *config.Project, force bool) error {
	s := c.SeePorts(ctx, p)
	if s.Err != nil {
		c.warn("ports %s could not be probed: %v", p.Ports(), s.Err)
		return nil
	}
	held := c.Held(ctx, p, s)
	if len(held) == 0 {
		return nil
	}
	var msgs []string
	hint := "fix: stop that program, or give " + p.Name + " another `port =` in bm2.toml; then `bm2 serve`"
	for k, h := range held {
		e, ok := h.explain(p, "`bm2 serve`")
		msg := h.message(p)
		if ok {
			msg = string(e.Reason) + ": " + e.Message
		}
		if k == 0 && ok {
			hint = hintOf(e)
		}
		if force {
			c.warn("%s (--force: serving anyway)", msg)
			continue
		}
		msgs = append(msgs, msg)
	}
	if force {
		return nil
	}
	return fail(Invalid, hint+ForceHint, errors.New(strings.Join(msgs, "\n")))
}

// OwnPorts returns the ports that the registered project of that name
// holds through instances systemd runs right now. It is best effort: when
// systemd is not reachable (check works without it), nothing is known to
// be the project's own.
func (c *Client) OwnPorts(ctx context.Context, name string) map[int]bool {
	own := map[int]bool{}
	e, err := c.FindProject(name)
	if err != nil || e.Project == nil {
		return own
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	sd, err := c.Connect(ctx)
	if err != nil {
		return own
	}
	defer sd.Close()
	names := make([]string, e.Project.Instances)
	for i := range names {
		names[i] = units.Instance(name, i)
	}
	statuses, err := sd.Units(ctx, names)
	if err != nil {
		return own
	}
	for i, u := range statuses {
		if u.MainPID != 0 { // a live main process is what holds the port
			own[e.Project.InstancePort(i)] = true
		}
	}
	return own
}
