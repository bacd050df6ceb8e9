// Command demo shows bm2 end to end on the built-in example app
// (examples/hello): it boots a throwaway systemd in namespaces, installs the
// freshly built bm2 into it, serves the app with 4 cluster-mode instances,
// shows `bm2 list` and requests being served, serves an app that listens
// without reusePort and shows the probe stopping it, then the fix, serves
// the example again as a normal user on their own systemd (user scope),
// then tears everything down. The host is not changed. Run it with
// `make demo` (as root).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/e2e/runtimes"
	"github.com/bm2dev/bm2/e2e/sandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("run me as root: I boot a throwaway systemd in new namespaces (nothing on the host changes)")
	}
	repo, err := sandbox.RepoRoot()
	if err != nil {
		return err
	}
	step("fetching Bun %s and Node.js %s from npm (cached in %s)", runtimes.BunVersion, runtimes.Node24Version, runtimes.CacheDir())
	bun, err := runtimes.Path(ctx, runtimes.Bun, runtimes.BunVersion)
	if err != nil {
		return err
	}
	node, err := runtimes.Path(ctx, runtimes.Node, runtimes.Node24Version)
	if err != nil {
		return err
	}
	step("booting a throwaway systemd in namespaces")
	start := time.Now()
	m, err := sandbox.Boot(ctx, sandbox.Options{Repo: repo, Binds: []string{runtimes.CacheDir() + ":ro"}, Name: "bm2-demo"})
	if err != nil {
		return err
	}
	defer m.Close()
	fmt.Printf("   systemd %s in %v\n", m.State(), time.Since(start).Round(time.Millisecond))

	run := func(show bool, script string) (string, error) {
		if show {
			fmt.Printf("\n# %s\n", strings.ReplaceAll(script, "\n", "\n# "))
		}
		out, err := m.Sh(ctx, script)
		if show || err != nil {
			fmt.Print(indent(out))
		}
		return out, err
	}
	sh := func(show bool, script string) error {
		_, err := run(show, script)
		return err
	}
	// A host's systemd mounts a bpf file system on /sys/fs/bpf at boot;
	// the sandbox's, which sees $container, does not: mount it as a host
	// has it, so that cluster projects are kernel-steered as there.
	step("installing bm2 inside (make install), Bun and Node.js in /usr/local/bin, bpffs on /sys/fs/bpf as on a host")
	if err := sh(false, fmt.Sprintf("make -s -C %q install >/dev/null && install -m 0755 %q /usr/local/bin/bun && install -m 0755 %q /usr/local/bin/node && "+
		"cp -r %q/examples/hello /srv/hello && (mountpoint -q /sys/fs/bpf || mount -t bpf -o mode=0700 bpf /sys/fs/bpf)",
		repo, bun, node, repo)); err != nil {
		return err
	}
	step("serving the example app")
	for _, s := range []string{
		"cat /srv/hello/bm2.toml",
		"cd /srv/hello && bm2 serve",
		"bm2 list",
		"for i in 1 2 3 4 5 6 7 8; do curl -s http://127.0.0.1:3000/; done",
		"systemctl status --no-pager -n 0 bm2@hello-0 | head -12",
		"journalctl -t bm2 --no-pager -o short -n 8",
		"bm2 logs hello -n 4",
		"bm2 events hello -n 4",
		"bm2 reload hello",
	} {
		if err := sh(true, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	step("an app that listens without reusePort, as written for PM2's cluster mode: the probe stops it")
	if err := sh(false, "install -d -m 0755 /srv/legacy"); err != nil {
		return err
	}
	for path, data := range map[string]string{"/srv/legacy/server.js": legacyApp, "/srv/legacy/bm2.toml": legacyToml} {
		if err := m.WriteFile(path, []byte(data), 0o644); err != nil {
			return err
		}
	}
	for _, s := range []string{"cat /srv/legacy/server.js", "cat /srv/legacy/bm2.toml"} {
		if err := sh(true, s); err != nil {
			return err
		}
	}
	// The probe must catch it: serve fails, naming reuseport_missing.
	const refused = "cd /srv/legacy && bm2 serve"
	out, err := run(true, refused)
	var ee *sandbox.ExecError
	if !errors.As(err, &ee) || ee.ExitCode <= 0 || !strings.Contains(out, "reuseport_missing") {
		return fmt.Errorf("%s: the probe did not stop an app without reusePort (%v)", refused, err)
	}
	fmt.Printf("   (exit status %d)\n", ee.ExitCode)
	for _, s := range []string{
		"journalctl -t bm2 --no-pager -o short BM2_PROJECT=legacy BM2_EVENT=reuseport_missing",
		"bm2 list legacy",
	} {
		if err := sh(true, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	step("the fix: bm2 supplies reusePort (or the app passes reusePort: true to listen)")
	for _, s := range []string{
		`echo 'reuseport = "preload"' >>/srv/legacy/bm2.toml`,
		"cd /srv/legacy && bm2 serve",
		"bm2 list legacy",
		"for i in 1 2 3 4; do curl -s http://127.0.0.1:3200/; done",
	} {
		if err := sh(true, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	step("the same app for a normal user, without sudo, on their own systemd (user scope)")
	if err := sh(false, `useradd -m -s /bin/bash demo && loginctl enable-linger demo && cp -r /srv/hello /home/demo/hello && `+
		`sed -i 's/^port = .*/port = 3100/' /home/demo/hello/bm2.toml && chown -R demo: /home/demo/hello && `+
		`for i in $(seq 100); do test -S /run/user/$(id -u demo)/systemd/private && exit 0; sleep 0.1; done; exit 1`); err != nil {
		return err
	}
	for _, s := range []string{
		"su -l demo -c 'cd hello && bm2 serve'",
		"su -l demo -c 'bm2 list'",
		"for i in 1 2 3 4; do curl -s http://127.0.0.1:3100/; done",
	} {
		if err := sh(true, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	step("tearing the sandbox down")
	return nil
}

// legacyApp and legacyToml are an app written for PM2's cluster mode,
// served in bm2's: its instances listen without reusePort.
const (
	legacyApp = `// Written for PM2's cluster mode, where node:cluster shares the port:
// it never asks for reusePort.
require("node:http")
  .createServer((req, res) => res.end(` + "`legacy instance ${process.env.BM2_APP_INSTANCE} (pid ${process.pid})\\n`" + `))
  .listen(Number(process.env.BM2_APP_PORT));
`
	legacyToml = `name = "legacy"
script = "server.js"
runtime = "node"
instances = 2
port = 3200
`
)

func step(format string, args ...any) {
	fmt.Printf("\n== "+format+"\n", args...)
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "   " + strings.ReplaceAll(s, "\n", "\n   ") + "\n"
}
