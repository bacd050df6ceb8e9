// Command bm2-generator is bm2's systemd generator; see bm2-generator(8) and
// package generator.
package main

import (
	"context"
	"os"

	"github.com/bm2dev/bm2/generator"
)

func main() {
	log := generator.OpenKmsg(os.Stderr)
	if err := generator.Run(context.Background(), os.Args[1:], generator.Env{Log: log}); err != nil {
		log.Log(3, err.Error())
		os.Exit(1)
	}
}
