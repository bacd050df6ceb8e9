package control

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/steer"
	"github.com/bm2dev/bm2/internal/wording"
)

// steerStore is where the scope keeps its projects' steering (package
// steer): the pins under Env.SteerPins, the locks and marks in the
// layout's SteerDir; none without a run directory.
func (c *Client) steerStore() steer.Store {
	s := steer.Store{Pins: c.SteerPins}
	if l := c.ScopeLayout(); l.RunStateDir != "" {
		s.Run = l.SteerDir()
	}
	return s
}

// steerView is what bm2 status knows of a project's steering.
type steerView struct {
	dir        string // where its group is pinned
	pinned     bool   // a group is pinned there
	live       int    // its live slots that hold a listener
	openErr    error  // why none could be opened
	marked     bool   // found unavailable this boot
	why, about string // the mark's reason and detail
	markErr    error  // the mark could not be read
}

// PortSteering is bm2 status's line about how a cluster-mode port of
// system scope spreads its connections; "" in fork mode and user scope,
// where there is nothing to say:
//
//	port 3000: round-robin over 2 instances (kernel-steered, /sys/fs/bpf/bm2/api)
//	port 3000: kernel hash (steering unavailable: no_bpffs: /sys/fs/bpf is on no bpf filesystem ...)
func (c *Client) PortSteering(p *config.Project) string {
	if c.IsUser() || p.Mode != config.Cluster {
		return ""
	}
	s := c.steerStore()
	v := steerView{dir: s.Dir(p.Name)}
	if g, err := steer.Open(v.dir); err == nil {
		v.pinned = true
		for _, slot := range g.Live() {
			if g.Filled(slot) {
				v.live++
			}
		}
		g.Close()
	} else {
		v.openErr = err
	}
	v.why, v.about, v.marked, v.markErr = s.Unavailable(p.Name)
	return steeringLine(p.Port, v)
}

// steeringLine words a steerView.
func steeringLine(port int, v steerView) string {
	head := fmt.Sprintf("port %d: ", port)
	var ue *steer.UnavailableError
	switch {
	case v.pinned && v.live > 0:
		return head + fmt.Sprintf("round-robin over %s (kernel-steered, %s)", wording.Plural(v.live, "instance", "instances"), v.dir)
	case v.pinned:
		return head + fmt.Sprintf("kernel hash (no instance in the steered turn yet, %s)", v.dir)
	case v.marked:
		line := head + "kernel hash (steering unavailable: " + v.why
		if v.about != "" {
			line += ": " + reason.Clean(v.about)
		}
		return line + ")"
	case errors.Is(v.openErr, fs.ErrPermission) || errors.Is(v.markErr, fs.ErrPermission):
		return head + "steering not known (run as root to see it)"
	case errors.As(v.openErr, &ue):
		return head + "kernel hash (steering unavailable: " + ue.Reason + ")"
	case errors.Is(v.openErr, fs.ErrNotExist):
		return head + "kernel hash (not steered yet)"
	}
	return head + "steering not known (" + wording.OneLine(v.openErr) + ")"
}
