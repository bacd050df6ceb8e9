package explain

import (
	"context"
	"errors"
	"fmt"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/reuseport"
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
func SeePorts(ctx context.Context, h Host, p *config.Project) PortsSeen {
	var s PortsSeen
	r := p.Ports()
	for port := r.Lo; port <= r.Hi && port > 0; port++ {
		s.Ports = append(s.Ports, port)
	}
	if len(s.Ports) == 0 {
		return s
	}
	id, err := h.ProjectIdentity(ctx, p, true)
	s.ID = id
	if err == nil {
		s.States, err = h.CheckPorts(ctx, id, s.Ports)
	}
	if errors.Is(err, identity.ErrNotPermitted) {
		s.States, err = h.CheckPorts(ctx, identity.Self(), s.Ports)
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
func Held(ctx context.Context, h Host, p *config.Project, s PortsSeen) []HeldPort {
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
			own = h.OwnPorts(ctx, p.Name)
		}
		if own[s.Ports[i]] {
			continue
		}
		who, _ := HolderOf(h, s.Ports[i], s.ID)
		held = append(held, HeldPort{Port: s.Ports[i], Holder: who})
	}
	return held
}

// Problem is a held port as bm2 check lists it among its problems, and
// serve refuses it: reason, message and fix, again being what to type
// once it is fixed ("`bm2 check`").
func (h HeldPort) Problem(p *config.Project, again string) string {
	if e, ok := h.Explained(p, again); ok {
		return ProblemText(e)
	}
	return h.Message(p) + ": stop that program or choose another port"
}

// Line is check's line for a held port whose holder is known ("" when
// it is not: the port's state line says it already).
func (h HeldPort) Line(p *config.Project) string {
	if e, ok := h.Explained(p, ""); ok {
		return fmt.Sprintf("port %d: %s", h.Port, e.Message)
	}
	return ""
}

// Explained is port_in_use, worded, when the holder is known.
func (h HeldPort) Explained(p *config.Project, again string) (reason.Explained, bool) {
	if h.Holder == "" {
		return reason.Explained{}, false
	}
	return reason.Explain(reason.PortInUse, reason.Facts{Project: p.Name, Port: h.Port, Detail: h.Holder, Again: again})
}

// Message says that a port is held, when who holds it is not known.
func (h HeldPort) Message(p *config.Project) string {
	return fmt.Sprintf("port %d is held by an exclusive listener that is not one of %s's instances", h.Port, p.Name)
}

// HolderOf names a listener on port that belongs to another user than
// id (Host.PortHolder). id's UID unknown: none.
func HolderOf(h Host, port int, id identity.Identity) (string, bool) {
	if id.UID < 0 {
		return "", false
	}
	return h.PortHolder(port, uint32(id.UID))
}
