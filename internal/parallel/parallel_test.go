package parallel

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// Every index is visited exactly once, whatever n and grain, on one CPU
// or several.
func TestForVisitsEachIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 64, 1000, 4097} {
			for _, grain := range []int{0, 1, 16, 5000} {
				seen := make([]int, n)
				For(n, grain, func(i int) { seen[i]++ })
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("procs %d n %d grain %d: index %d visited %d times", procs, n, grain, i, c)
					}
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// With enough work and more than one CPU, the calls run concurrently.
func TestForRunsConcurrently(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	var mu sync.Mutex
	inside, most := 0, 0
	release := make(chan struct{})
	first := true
	For(2, 1, func(i int) {
		mu.Lock()
		inside++
		most = max(most, inside)
		wait := first
		first = false
		if inside == 2 {
			close(release)
		}
		mu.Unlock()
		if wait {
			select { // the other call must start while this one runs
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		mu.Lock()
		inside--
		mu.Unlock()
	})
	if most != 2 {
		t.Fatalf("at most %d calls at once, want 2", most)
	}
}
