package testutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// LockFile takes an exclusive flock on path (created if missing), waiting
// until ctx is done: how the test caches (runtimes, root file systems)
// serialise parallel test processes filling the same entry. The returned
// function releases it.
func LockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for lock %s: %w", path, context.Cause(ctx))
		case <-t.C:
		}
	}
}
