// Command bm2-generator is bm2's systemd generator; see bm2-generator(8) and
// package generator.
package main

import (
	"context"
	"errors"
	"os"

	"github.com/bm2dev/bm2/generator"
)

func main() {
	log := generator.OpenLogger(os.Stderr)
	err := generator.Run(context.Background(), os.Args[1:], generator.Env{Log: log})
	if err != nil {
		if !errors.Is(err, generator.ErrSkipped) { // skips are logged one by one already
			log.Log(3, err.Error())
		}
		os.Exit(1)
	}
}
