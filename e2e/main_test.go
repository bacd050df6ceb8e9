package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/bm2dev/bm2/e2e/sandbox"
)

// TestMain builds bm2 once, before any sandbox installs it: beds run
// `make install-files` in parallel from the same tree and must not race
// each other rebuilding bin/.
func TestMain(m *testing.M) {
	if os.Geteuid() == 0 {
		root, err := sandbox.RepoRoot()
		if err == nil {
			cmd := exec.Command("make", "-s", "-C", root, "build")
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			err = cmd.Run()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: make build: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}
