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

// gcPercent: the generator lives for one run, and much of what it
// allocates (the parsed projects, the rendered units) stays reachable
// until the units are written, so collecting at the default pace
// (GOGC=100: each time the heap doubles, from 4 MiB) costs time and frees
// little; at 400 a thousand projects take a few collections instead of a
// dozen, for about 8 MiB more at the peak.
const gcPercent = 400

func main() {
	debug.SetGCPercent(gcPercent)
	log := generator.OpenLogger(os.Stderr)
	err := generator.Run(context.Background(), os.Args[1:], generator.Env{Log: log})
	if err != nil {
		if !errors.Is(err, generator.ErrSkipped) { // skips are logged one by one already
			log.Log(3, err.Error())
		}
		os.Exit(1)
	}
}
