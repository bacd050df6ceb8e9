// Command skipsummary prints the last line of `make test`: how many tests
// were skipped and why, from the skip log the tests wrote (see
// testutil.SkipLogEnv), with the one command that makes each run.
package main

import (
	"fmt"
	"os"

	"github.com/bm2dev/bm2/internal/testutil"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: skipsummary SKIPLOG")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil && !os.IsNotExist(err) {
		fmt.Fprintln(os.Stderr, "skipsummary:", err)
		os.Exit(1)
	}
	fmt.Println(testutil.SkipSummary(string(data)))
}
