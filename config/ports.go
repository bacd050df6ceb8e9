package config

import (
	"fmt"
	"sort"
)

// PortRange is an inclusive range of ports.
type PortRange struct{ Lo, Hi int }

func (r PortRange) String() string { return fmt.Sprintf("%d~%d", r.Lo, r.Hi) }

// Overlaps reports whether two ranges share a port.
func (r PortRange) Overlaps(o PortRange) bool { return r.Lo <= o.Hi && o.Lo <= r.Hi }

// ConflictError is a project refused because its port range overlaps one
// that another project holds. It prints the exact sentence users know:
// "port conflict: web port range 3000~3000 overlaps api 3000~3003".
type ConflictError struct {
	Project, Holder           string
	ProjectFile, HolderFile   string
	ProjectPorts, HolderPorts PortRange
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("port conflict: %s port range %s overlaps %s %s",
		e.Project, e.ProjectPorts, e.Holder, e.HolderPorts)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// CheckConflict returns a *ConflictError when p's range overlaps that of any
// project in held (other than one with p's own name), naming the holder with
// the lowest port; nil otherwise.
func CheckConflict(p *Project, held []*Project) error {
	var holder *Project
	for _, h := range held {
		if h.Name == p.Name || !p.Ports().Overlaps(h.Ports()) {
			continue
		}
		if holder == nil || h.Port < holder.Port || (h.Port == holder.Port && h.Name < holder.Name) {
			holder = h
		}
	}
	if holder == nil {
		return nil
	}
	return &ConflictError{
		Project: p.Name, ProjectFile: p.File, ProjectPorts: p.Ports(),
		Holder: holder.Name, HolderFile: holder.File, HolderPorts: holder.Ports(),
	}
}

// ResolveConflicts decides which projects keep their port ranges. Projects
// are considered in name order; each one keeps its range unless it overlaps
// a project already kept, in which case it is refused with a *ConflictError.
// The winner between two files therefore never depends on directory order,
// file times or which file was written last: the name that sorts first wins.
// The result is sorted by name.
func ResolveConflicts(projects []*Project) (kept []*Project, refused []*ConflictError) {
	sorted := append([]*Project(nil), projects...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, p := range sorted {
		if err := CheckConflict(p, kept); err != nil {
			refused = append(refused, err.(*ConflictError))
			continue
		}
		kept = append(kept, p)
	}
	return kept, refused
}
