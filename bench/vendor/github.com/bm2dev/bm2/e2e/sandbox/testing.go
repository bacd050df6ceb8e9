package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

// RequireRoot skips the test when this host cannot boot sandboxes (not
// root, or a required tool such as unshare or systemd is missing). When the
// CI environment variable is "true" it fails the test instead, so that CI
// never passes by silently skipping every end-to-end test.
func RequireRoot(t testing.TB) {
	t.Helper()
	if err := checkHost(); err != nil {
		fix := "sudo make test-deps && sudo make test"
		if os.Geteuid() != 0 {
			fix = "sudo make test"
		}
		testutil.Skip(t, testutil.Need{What: "no sandbox for end-to-end tests", Fix: fix}, err)
	}
}

var (
	sweepOnce sync.Once
	sweepErr  error
)

// New boots a sandbox for a test, or fails it. It calls RequireRoot first
// and, once per process, Sweep. The sandbox is closed by t.Cleanup, whatever
// the outcome of the test; if the test failed, the sandbox's console output
// and failed units are logged first. Boot is bounded by the test's deadline
// (go test -timeout) and DefaultBootTimeout.
func New(t testing.TB, opts Options) *Machine {
	t.Helper()
	RequireRoot(t)
	sweepOnce.Do(func() { sweepErr = Sweep(context.Background()) })
	if sweepErr != nil {
		t.Logf("warning: %v", sweepErr)
	}
	ctx, cancel := testContext(t)
	defer cancel()
	start := time.Now()
	m, err := Boot(ctx, opts)
	if err != nil {
		t.Fatalf("boot sandbox: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logDiagnostics(t, m)
		}
		if err := m.Close(); err != nil {
			t.Errorf("%v", err)
		}
	})
	t.Logf("sandbox %s booted in %v (%s)", m.ID(), time.Since(start).Round(time.Millisecond), m.State())
	if m.State() != "running" {
		logFailedUnits(t, m)
	}
	return m
}

// MustSh runs script like Sh, failing the test if it fails, and returns its
// combined output. It is bounded by the test's deadline.
func (m *Machine) MustSh(t testing.TB, script string) string {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	out, err := m.Sh(ctx, script)
	if err != nil {
		t.Fatalf("in sandbox %s: %v", m.ID(), err)
	}
	return out
}

func logFailedUnits(t testing.TB, m *Machine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := m.Sh(ctx, "systemctl --failed --no-legend --plain")
	t.Logf("sandbox %s failed units:\n%s", m.ID(), strings.TrimSpace(out))
}

func logDiagnostics(t testing.TB, m *Machine) {
	t.Helper()
	logFailedUnits(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := m.Sh(ctx, "journalctl --no-pager -n 200 -o short-monotonic"); err == nil {
		t.Logf("sandbox %s journal (last 200 lines):\n%s", m.ID(), out)
	}
	if c := m.Console(); c != "" {
		t.Logf("sandbox %s console:\n%s", m.ID(), c)
	}
}

// testContext returns a context that ends at t's deadline, if it has one.
func testContext(t testing.TB) (context.Context, context.CancelFunc) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			return context.WithDeadline(context.Background(), deadline)
		}
	}
	return context.WithCancel(context.Background())
}

// RepoRoot finds the repository under test: the nearest directory at or
// above the working directory that holds go.mod. (go test runs in the
// package's directory; runtime.Caller paths are useless under -trimpath.)
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
