package testutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// FillCache puts the entry key into the test cache directory cache once,
// however many processes ask at the same time. Under a lock file, unless
// ready(cache/key) says another process made it meanwhile, it removes
// what an interrupted fill left (its temporary directories, and an entry
// that is not ready, which a rename cannot produce but a person can),
// lets fill build the entry in a fresh temporary directory, and moves the
// directory fill returns to cache/key with one rename.
func FillCache(ctx context.Context, cache, key string, ready func(dir string) bool, fill func(tmp string) (string, error)) error {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return fmt.Errorf("create cache: %w", err)
	}
	unlock, err := LockFile(ctx, filepath.Join(cache, "."+key+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	dest := filepath.Join(cache, key)
	if ready(dest) {
		return nil
	}
	stale, _ := filepath.Glob(filepath.Join(cache, ".fill-"+key+"-*"))
	for _, d := range append(stale, dest) {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("remove stale %s: %w", d, err)
		}
	}
	tmp, err := os.MkdirTemp(cache, ".fill-"+key+"-")
	if err != nil {
		return fmt.Errorf("create temporary dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir, err := fill(tmp)
	if err != nil {
		return err
	}
	if !ready(dir) {
		return fmt.Errorf("%s is not a complete %s", dir, key)
	}
	if err := os.Rename(dir, dest); err != nil {
		return fmt.Errorf("move into cache: %w", err)
	}
	return nil
}

// CacheDir is the absolute path of a test cache: $env when set, else def.
func CacheDir(env, def string) string {
	if d := os.Getenv(env); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	return def
}
