// Command bm2-generator is bm2's systemd generator; see bm2-generator(8) and
// package generator.
package main

import (
	"context"
	"errors"
	"os"
	"runtime/debug"

	"github.com/bm2dev/bm2/generator"
)

// memoryLimit: the generator lives for one run, and what it allocates
// is either kept to the end (the parsed projects) or garbage the exit
// frees at once. Collecting it costs more than the pages it would spare:
// with a thousand projects, four collections at GOGC=200 kept the peak
// at 16 MiB and cost some 6 ms of a 58 ms run (the pages of the 21 MiB
// heap without them, each a page fault, cost less). So the collector
// runs only when the heap nears this limit: never for a thousand
// projects; for five thousand, near 64 MiB instead of at 35.
const memoryLimit = 64 << 20

func main() {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(memoryLimit)
	log := generator.OpenLogger(os.Stderr)
	err := generator.Run(context.Background(), os.Args[1:], generator.Env{Log: log})
	if err != nil {
		if !errors.Is(err, generator.ErrSkipped) { // skips are logged one by one already
			log.Log(3, err.Error())
		}
		os.Exit(1)
	}
}
