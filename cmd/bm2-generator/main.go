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
// allocates (the parsed projects) stays reachable to the end. At the
// default pace (GOGC=100, a collection each time the heap doubles from
// 4 MiB) a thousand projects are collected nine times for little; at 200
// four times, and the heap, every page of which costs a fresh process a
// page fault, stays small (16 MiB at the peak, with 1000 projects).
const gcPercent = 200

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
