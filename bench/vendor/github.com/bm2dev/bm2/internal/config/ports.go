package config

import (
	"fmt"
	"sort"
)

// PortRange is an inclusive range of ports.
type PortRange struct{ Lo, Hi int }

func (r PortRange) String() string { return fmt.Sprintf("%d~%d", r.Lo, r.Hi) }

// Overlaps reports whether two ranges share a port. The zero range (a
// worker's: no port) overlaps nothing.
func (r PortRange) Overlaps(o PortRange) bool {
	return !r.Empty() && !o.Empty() && r.Lo <= o.Hi && o.Lo <= r.Hi
}

// Empty tells whether r is the zero range: no port at all.
func (r PortRange) Empty() bool { return r.Lo == 0 && r.Hi == 0 }

// ConflictError is a project refused because its port range overlaps one
// that another project holds. It prints the exact sentence users know:
// "port conflict: web port range 3000~3000 overlaps api 3000~3003".
type ConflictError struct {
	Project, Holder           string
	ProjectFile, HolderFile   string
	ProjectPorts, HolderPorts PortRange
	// ProjectBy and HolderBy name the key that makes the range that
	// project's when it is not its own port range: "health_port" or
	// "[sandbox] extra_ports" (Project.OccupiedBy).
	ProjectBy, HolderBy string
}

func (e *ConflictError) Error() string {
	what := func(by string) string {
		if by != "" {
			return " (" + by + ")"
		}
		return ""
	}
	return fmt.Sprintf("port conflict: %s port range %s%s overlaps %s %s%s",
		e.Project, e.ProjectPorts, what(e.ProjectBy), e.Holder, e.HolderPorts, what(e.HolderBy))
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// CheckConflict returns a *ConflictError when one of p's ranges
// (Occupied: its port range, health ports and extra ports) overlaps one of any
// project's in held (other than one with p's own name), naming the holder
// with the lowest port; nil otherwise. The port ranges themselves are
// compared first, so that two projects whose ranges overlap get the
// sentence users know.
func CheckConflict(p *Project, held []*Project) error {
	var holder *Project
	var pi, hi int
	for _, h := range held {
		if h.Name == p.Name {
			continue
		}
		i, j, ok := overlap(p, h)
		if !ok {
			continue
		}
		if holder == nil || h.Port < holder.Port || (h.Port == holder.Port && h.Name < holder.Name) {
			holder, pi, hi = h, i, j
		}
	}
	if holder == nil {
		return nil
	}
	return &ConflictError{
		Project: p.Name, ProjectFile: p.File, ProjectPorts: p.Occupied()[pi], ProjectBy: p.OccupiedBy(pi),
		Holder: holder.Name, HolderFile: holder.File, HolderPorts: holder.Occupied()[hi], HolderBy: holder.OccupiedBy(hi),
	}
}

// Overlap reports the first range of p and the first of h (Occupied: port
// ranges first, then health ports, then extra ports) that overlap.
func Overlap(p, h *Project) (PortRange, PortRange, bool) {
	i, j, ok := overlap(p, h)
	if !ok {
		return PortRange{}, PortRange{}, false
	}
	return p.Occupied()[i], h.Occupied()[j], true
}

// overlap finds the first pair of ranges of p and h that overlap, as
// indexes in their Occupied lists.
func overlap(p, h *Project) (int, int, bool) {
	ps, hs := p.Occupied(), h.Occupied()
	for i, pr := range ps {
		for j, hr := range hs {
			if pr.Overlaps(hr) {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// ResolveConflicts decides which projects keep their port ranges. Projects
// are considered in name order; each one keeps its range unless it overlaps
// a project already kept, in which case it is refused with a *ConflictError.
// The winner between two files therefore never depends on directory order,
// file times or which file was written last: the name that sorts first wins.
// The result is sorted by name.
//
// It is CheckConflict of each project against those kept before it, but
// the candidates come from an index of the ports kept so far, so that the
// generator's cost stays linear in the number of projects.
func ResolveConflicts(projects []*Project) (kept []*Project, refused []*ConflictError) {
	sorted := append([]*Project(nil), projects...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var idx portIndex
	for _, p := range sorted {
		if err := idx.check(p, kept); err != nil {
			refused = append(refused, err)
			continue
		}
		idx.add(p, len(kept))
		kept = append(kept, p)
	}
	return kept, refused
}

// maxIndexed is the widest range portIndex indexes port by port; a wider
// one (none that config accepts: ports end at 65535) is compared with
// every project, as CheckConflict does.
const maxIndexed = 1 << 16

// portIndex holds the kept projects, as indexes into the kept list, by
// each port they occupy.
type portIndex struct {
	byPort map[int][]int
	wide   []int // projects with a range wider than maxIndexed
}

func (x *portIndex) add(p *Project, k int) {
	if x.byPort == nil {
		x.byPort = make(map[int][]int)
	}
	rs := p.Occupied()
	for _, r := range rs {
		if r.Hi-r.Lo >= maxIndexed {
			x.wide = append(x.wide, k)
			return
		}
	}
	for _, r := range rs {
		for port := r.Lo; port <= r.Hi; port++ {
			x.byPort[port] = append(x.byPort[port], k)
		}
	}
}

// check is CheckConflict(p, kept) with the same holder: of those that
// overlap p, the lowest port, then name, then the first kept.
func (x *portIndex) check(p *Project, kept []*Project) *ConflictError {
	best := -1
	consider := func(k int) {
		h := kept[k]
		if h.Name == p.Name {
			return
		}
		if _, _, ok := overlap(p, h); !ok {
			return
		}
		if best < 0 {
			best = k
			return
		}
		b := kept[best]
		if h.Port < b.Port || (h.Port == b.Port && (h.Name < b.Name || (h.Name == b.Name && k < best))) {
			best = k
		}
	}
	for _, r := range p.Occupied() {
		if r.Hi-r.Lo >= maxIndexed {
			for k := range kept {
				consider(k)
			}
			break
		}
		for port := r.Lo; port <= r.Hi; port++ {
			for _, k := range x.byPort[port] {
				consider(k)
			}
		}
	}
	for _, k := range x.wide {
		consider(k)
	}
	if best < 0 {
		return nil
	}
	holder := kept[best]
	pi, hi, _ := overlap(p, holder)
	return &ConflictError{
		Project: p.Name, ProjectFile: p.File, ProjectPorts: p.Occupied()[pi], ProjectBy: p.OccupiedBy(pi),
		Holder: holder.Name, HolderFile: holder.File, HolderPorts: holder.Occupied()[hi], HolderBy: holder.OccupiedBy(hi),
	}
}
