// Package parallel spreads independent pieces of work over the CPUs: the
// generator reads, parses and renders every project at each
// daemon-reload, and on a host of a thousand projects one core is the
// difference between a reload that waits on it and one that does not.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls f(i) for every i in [0, n), from up to GOMAXPROCS goroutines
// but never more than one per grain items (below 2*grain it runs f in
// the calling goroutine alone: a goroutine costs more than a few small
// pieces). Each i is given to exactly one call; f must not depend on the
// order of the calls, and writes its result to its own slot (results[i]),
// which makes the outcome the same as a plain loop's. For returns once
// every call has.
func For(n, grain int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(grain, 1))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	// Items are handed out in small batches, so that a slow one (a big
	// file) does not leave the other goroutines idle at the end.
	batch := max(1, min(grain, n/(workers*8)))
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		for {
			lo := int(next.Add(int64(batch))) - batch
			if lo >= n {
				return
			}
			for i := lo; i < min(lo+batch, n); i++ {
				f(i)
			}
		}
	}
	for range workers - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); work() }()
	}
	work()
	wg.Wait()
}
