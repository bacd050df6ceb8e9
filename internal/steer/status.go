package steer

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/wording"
)

// ScopeStore is where scope l keeps its projects' steering: the pins
// under pins (Env.SteerPins), the locks and marks in the layout's
// SteerDir; none without a run directory.
func ScopeStore(pins string, l layout.Layout) Store {
	s := Store{Pins: pins}
	if l.RunStateDir != "" {
		s.Run = l.SteerDir()
	}
	return s
}

// portView is what bm2 status knows of a project's steering.
type portView struct {
	dir        string // where its group is pinned
	pinned     bool   // a group is pinned there
	live       int    // its live slots that hold a listener
	openErr    error  // why none could be opened
	marked     bool   // found unavailable this boot
	why, about string // the mark's reason and detail
	markErr    error  // the mark could not be read
}

// PortLine is bm2 status's line about how a cluster-mode port of system
// scope (s, ScopeStore) spreads its connections; "" in fork mode, where
// there is nothing to say (nor in user scope, where it is not asked):
//
//	port 3000: round-robin over 2 instances (kernel-steered, /sys/fs/bpf/bm2/api)
//	port 3000: kernel hash (steering unavailable: no_bpffs: /sys/fs/bpf is on no bpf filesystem ...)
func PortLine(s Store, p *config.Project) string {
	if p.Mode != config.Cluster {
		return ""
	}
	v := portView{dir: s.Dir(p.Name)}
	if g, err := Open(v.dir); err == nil {
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

// steeringLine words a portView.
func steeringLine(port int, v portView) string {
	head := fmt.Sprintf("port %d: ", port)
	var ue *UnavailableError
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
