package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/roots"
	"github.com/bm2dev/bm2/e2e/runtimes"
	"github.com/bm2dev/bm2/e2e/sandbox"
)

// bed is one sandbox with bm2 installed and the test runtimes in place.
type bed struct {
	*sandbox.Machine
	t    *testing.T
	repo string
}

func repoRoot(t testing.TB) string {
	root, err := sandbox.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// newBed boots a sandbox, runs `make install` from the repository inside it
// and installs Bun 1.4.4 and Node.js 24 as /usr/local/bin/bun and
// /usr/local/bin/node (the machine's own /usr/bin/node, 20.x, stays).
func newBed(t *testing.T) *bed {
	t.Helper()
	return newBedWith(t, sandbox.Options{})
}

// releaseEnv names the environment variable that boots every bed from a
// root of another Debian release (BM2_E2E_RELEASE=trixie: the whole suite
// under systemd 257; see e2e/roots). Beds that need the host's cgroup v1
// (Legacy) stay on the host's root.
const releaseEnv = "BM2_E2E_RELEASE"

// newBedWith is newBed with sandbox options (Legacy); Repo and Binds are
// newBed's.
func newBedWith(t *testing.T, opts sandbox.Options) *bed {
	t.Helper()
	sandbox.RequireRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bun, err := runtimes.Path(ctx, runtimes.Bun, runtimes.BunVersion)
	if err != nil {
		t.Fatalf("bun: %v", err)
	}
	node, err := runtimes.Path(ctx, runtimes.Node, runtimes.Node24Version)
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	repo := repoRoot(t)
	t.Cleanup(func() {
		// The host's /dev/null must come out of every sandbox as it went in.
		if st, err := os.Stat("/dev/null"); err == nil && st.Mode().Perm() != 0o666 {
			t.Errorf("the host's /dev/null is now %v", st.Mode())
		}
	})
	opts.Repo, opts.Binds = repo, []string{runtimes.CacheDir() + ":ro"}
	if r := os.Getenv(releaseEnv); r != "" && opts.Root == "" && !opts.Legacy {
		opts.Root = roots.Require(t, r)
	}
	m := sandbox.New(t, opts)
	b := &bed{Machine: m, t: t, repo: repo}
	// A host's systemd mounts a bpf file system on /sys/fs/bpf at boot;
	// the sandbox's, which sees $container, does not: mount it as a host
	// has it, so that cluster projects are kernel-steered as there
	// (TestSteering unmounts it for the fallback).
	b.sh(fmt.Sprintf(`set -e
make -s -C %q install-files >/dev/null
install -m 0755 %q /usr/local/bin/bun
install -m 0755 %q /usr/local/bin/node
id bm2 >/dev/null
test -d /var/lib/bm2/errored
mountpoint -q /sys/fs/bpf || mount -t bpf -o mode=0700 bpf /sys/fs/bpf`, repo, bun, node))
	return b
}

// in returns the bed bound to a subtest, so failures stop the right test.
func (b *bed) in(t *testing.T) *bed {
	c := *b
	c.t = t
	return &c
}

// sh runs a shell script inside and fails the test if it fails.
func (b *bed) sh(script string) string {
	b.t.Helper()
	return b.MustSh(b.t, script)
}

// try runs a script and returns its output and error without failing.
func (b *bed) try(script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return b.Sh(ctx, script)
}

// write puts a file inside the sandbox.
func (b *bed) write(path, data string) {
	b.t.Helper()
	// Directories readable by the apps' unprivileged user.
	b.sh(fmt.Sprintf(`install -d -m 0755 %q`, filepath.Dir(path)))
	if err := b.WriteFile(path, []byte(data), 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// app copies a test app from e2e/apps into dir inside the sandbox.
func (b *bed) app(dir, name, as string) {
	b.t.Helper()
	data, err := os.ReadFile(filepath.Join(b.repo, "e2e/apps", name))
	if err != nil {
		b.t.Fatal(err)
	}
	b.write(filepath.Join(dir, as), string(data))
}

// eventually polls script until it succeeds, failing the test with the
// last output after timeout.
func (b *bed) eventually(timeout time.Duration, what, script string) string {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := b.try(script)
		if err == nil {
			return out
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: not true after %v: %v\n%s", what, timeout, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cursor returns the journal's current end, so later reads see only what
// came after it.
func (b *bed) cursor() string {
	b.t.Helper()
	out := b.sh(`journalctl -n 1 --show-cursor --no-pager -o cat | sed -n 's/^-- cursor: //p'`)
	return strings.TrimSpace(out)
}

// journalSince returns the journal messages args select after cursor.
// Not --after-cursor: with a match, journalctl 252 skips the first entry
// that matches when the cursor's own entry does not.
func (b *bed) journalSince(cursor string, args string) string {
	b.t.Helper()
	var out strings.Builder
	for _, e := range b.journal(fmt.Sprintf(`--cursor=%q %s`, cursor, args)) {
		if e.str("__CURSOR") != cursor {
			out.WriteString(e.str("MESSAGE") + "\n")
		}
	}
	return out.String()
}

// waitActive waits until every unit is active (running).
func (b *bed) waitActive(timeout time.Duration, unitNames ...string) {
	b.t.Helper()
	script := "for u in"
	for _, u := range unitNames {
		script += fmt.Sprintf(" %q", u)
	}
	script += `; do test "$(systemctl show -P SubState "$u")" = running || { systemctl status --no-pager "$u" | head -20; exit 1; }; done`
	b.eventually(timeout, "units active", script)
}

// entry is one journal entry as `journalctl -o json` prints it.
type entry map[string]any

func (e entry) str(k string) string { s, _ := e[k].(string); return s }

// usec reads a timestamp field (microseconds, as a decimal string).
func (e entry) usec(k string) int64 {
	var n int64
	fmt.Sscan(e.str(k), &n)
	return n
}

// journal returns the entries journalctl selects with args.
func (b *bed) journal(args string) []entry {
	b.t.Helper()
	out := b.sh(`journalctl --no-pager -o json ` + args + ` || true`)
	var es []entry
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" || line == "-- No entries --" {
			continue
		}
		var e entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			b.t.Fatalf("journalctl -o json printed %q: %v", line, err)
		}
		es = append(es, e)
	}
	return es
}

// events returns bm2's events of one kind for one project.
func (b *bed) events(kind, project string) []entry {
	b.t.Helper()
	return b.journal(fmt.Sprintf("-t bm2 BM2_EVENT=%s BM2_PROJECT=%s", kind, project))
}

// waitEvents waits until at least n events of a kind exist for a project.
func (b *bed) waitEvents(timeout time.Duration, kind, project string, n int) []entry {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		es := b.events(kind, project)
		if len(es) >= n {
			return es
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%d %s events for %s after %v, want %d:\n%s", len(es), kind, project, timeout, n,
				b.sh(`journalctl --no-pager -t bm2 -n 30 -o cat`))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// show reads one property of a unit.
func (b *bed) show(unit, prop string) string {
	b.t.Helper()
	return strings.TrimSpace(b.sh(fmt.Sprintf(`systemctl show -P %s %q`, prop, unit)))
}
