package config

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
)

// resolveByScan is ResolveConflicts as the plain definition says: each
// project, in name order, checked against every project kept before it.
func resolveByScan(projects []*Project) (kept []*Project, refused []*ConflictError) {
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

// The port index decides exactly as the scan over every kept project:
// same projects kept, same refusals naming the same holder and ranges,
// on crowded random port layouts (fork ranges, extra ports, projects of
// the same name).
func TestResolveConflictsMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := range 500 {
		n := 1 + rng.Intn(40)
		var ps []*Project
		for i := range n {
			p := &Project{
				Name:      fmt.Sprintf("p%02d", rng.Intn(n+5)),
				File:      fmt.Sprintf("/etc/bm2/%d.toml", i),
				Port:      1 + rng.Intn(60),
				Instances: 1 + rng.Intn(6),
				Mode:      Cluster,
			}
			if rng.Intn(2) == 0 {
				p.Mode = Fork
			}
			for range rng.Intn(3) {
				p.Sandbox.ExtraPorts = append(p.Sandbox.ExtraPorts, 1+rng.Intn(70))
			}
			if rng.Intn(20) == 0 {
				p.Instances = maxIndexed + 10 // wider than the index indexes
				p.Mode = Fork
			}
			ps = append(ps, p)
		}
		kept, refused := ResolveConflicts(ps)
		wantKept, wantRefused := resolveByScan(ps)
		if !reflect.DeepEqual(kept, wantKept) || !reflect.DeepEqual(refused, wantRefused) {
			t.Fatalf("round %d: kept %d refused %v, want kept %d refused %v", round, len(kept), refused, len(wantKept), wantRefused)
		}
	}
}

// 1000 projects on distinct ports: none refused, in linear time (the
// generator resolves every project at each daemon-reload).
func TestResolveConflictsMany(t *testing.T) {
	var ps []*Project
	for i := range 1000 {
		ps = append(ps, &Project{Name: fmt.Sprintf("p%04d", i), Port: 10000 + i, Instances: 4, Mode: Cluster})
	}
	ps = append(ps, &Project{Name: "zz", Port: 10500, Instances: 1, Mode: Cluster})
	kept, refused := ResolveConflicts(ps)
	if len(kept) != 1000 || len(refused) != 1 || refused[0].Holder != "p0500" {
		t.Fatalf("kept %d, refused %v", len(kept), refused)
	}
}
