package roots

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

// Trixie is Debian 13, with systemd 257.
const Trixie = "trixie"

// Packages are what a root holds beyond debootstrap's minbase: systemd
// and D-Bus to boot, names for dynamic users and logins for user managers
// (as a Debian host has them), and what `make install-files` and the tests
// run inside (make, ip, ss, nstat, sysctl, curl, wrk).
var Packages = []string{"systemd", "systemd-sysv", "dbus", "libnss-systemd", "libpam-systemd", "dbus-user-session",
	"iproute2", "make", "procps", "curl", "wrk"}

// DefaultCacheDir is where roots are kept unless $BM2_TEST_ROOTS says
// otherwise.
const DefaultCacheDir = "/var/cache/bm2-test/roots"

// CacheEnv names the environment variable that overrides DefaultCacheDir.
const CacheEnv = "BM2_TEST_ROOTS"

// Mirror is the Debian mirror roots come from ($BM2_TEST_MIRROR overrides).
const Mirror = "http://deb.debian.org/debian"

// CacheDir returns the absolute path of the root cache.
func CacheDir() string { return testutil.CacheDir(CacheEnv, DefaultCacheDir) }

// key is the cache directory name of release with Packages: a new list
// makes a new root rather than reusing one that lacks a package.
func key(release string) string {
	sum := sha256.Sum256([]byte(strings.Join(Packages, ",")))
	return release + "-" + hex.EncodeToString(sum[:4])
}

// ready tells whether dir is a finished root (a rename puts it there
// whole, so its systemd is enough to tell).
func ready(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "usr/lib/systemd/systemd"))
	return err == nil && fi.Mode().IsRegular()
}

// releaseName is what a Debian code name looks like, and all Path takes.
var releaseName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// Path returns the directory of a root of release (a Debian code name),
// making it with debootstrap first if it is not cached yet. It is safe to
// call concurrently, also from several processes. It needs root.
func Path(ctx context.Context, release string) (string, error) {
	if !releaseName.MatchString(release) {
		return "", fmt.Errorf("root: bad release %q", release)
	}
	cache, k := CacheDir(), key(release)
	dest := filepath.Join(cache, k)
	if ready(dest) {
		return dest, nil
	}
	if err := build(ctx, cache, k, release); err != nil {
		return "", fmt.Errorf("make a Debian %s root: %w", release, err)
	}
	return dest, nil
}

func build(ctx context.Context, cache, k, release string) error {
	return testutil.FillCache(ctx, cache, k, ready, func(tmp string) (string, error) {
		return debootstrap(ctx, tmp, release)
	})
}

// debootstrap makes a root of release in tmp/root and returns its path.
func debootstrap(ctx context.Context, tmp, release string) (string, error) {
	exe, err := testutil.LookCommand("debootstrap")
	if err != nil {
		return "", err
	}
	mirror := Mirror
	if m := os.Getenv("BM2_TEST_MIRROR"); m != "" {
		mirror = m
	}
	root := filepath.Join(tmp, "root")
	cmd := exec.CommandContext(ctx, exe, "--variant=minbase", "--include="+strings.Join(Packages, ","), release, root, mirror)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// In a mount namespace of its own (Go makes its mounts private), so
	// that the proc and sys it mounts in the root vanish with it, however
	// it ends; in a process group of its own, killed whole when ctx ends
	// or this process dies, so that no dpkg outlives it into the next
	// build's sweep.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		tail := out.String()
		if len(tail) > 2000 {
			tail = "..." + tail[len(tail)-2000:]
		}
		return "", fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, tail)
	}
	return root, nil
}

// SystemdVersion is the major version of the systemd package in root
// (from its dpkg status: "257.13-1~deb13u1" is 257).
func SystemdVersion(root string) (int, error) {
	f, err := os.Open(filepath.Join(root, "var/lib/dpkg/status"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	inSystemd := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			inSystemd = false
		case strings.HasPrefix(line, "Package: "):
			inSystemd = line == "Package: systemd"
		case inSystemd && strings.HasPrefix(line, "Version: "):
			v := strings.TrimPrefix(line, "Version: ")
			if i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
				v = v[:i]
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return 0, fmt.Errorf("systemd version %q in %s: %w", line, f.Name(), err)
			}
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no systemd package in %s", f.Name())
}

// buildTimeout bounds Require.
const buildTimeout = 10 * time.Minute

// Require returns the path of a root of release for a test, like Path. If
// it cannot be had (not root, no debootstrap, no mirror), the test is
// skipped, or failed when the CI environment variable is "true".
func Require(t testing.TB, release string) string {
	t.Helper()
	testutil.Root(t)
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	p, err := Path(ctx, release)
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no Debian " + release + " root", Fix: "make test-deps (apt-get install debootstrap; it makes the root from the Debian mirror)"}, err)
	}
	return p
}
