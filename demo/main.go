// Command demo shows bm2 end to end on the built-in example app
// (examples/hello): it boots a throwaway systemd in namespaces, installs the
// freshly built bm2 into it, serves the app with 4 cluster-mode instances,
// shows `bm2 list` and requests being served, serves it again as a normal
// user on their own systemd (user scope), then tears everything down.
// The host is not changed. Run it with `make demo` (as root).
package main

import (
	"context"
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
	step("fetching Bun %s from npm (cached in %s)", runtimes.BunVersion, runtimes.CacheDir())
	bun, err := runtimes.Path(ctx, runtimes.Bun, runtimes.BunVersion)
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

	sh := func(show bool, script string) error {
		if show {
			fmt.Printf("\n# %s\n", strings.ReplaceAll(script, "\n", "\n# "))
		}
		out, err := m.Sh(ctx, script)
		if show || err != nil {
			fmt.Print(indent(out))
		}
		return err
	}
	step("installing bm2 inside (make install) and Bun as /usr/local/bin/bun")
	if err := sh(false, fmt.Sprintf("make -s -C %q install >/dev/null && install -m 0755 %q /usr/local/bin/bun && cp -r %q/examples/hello /srv/hello",
		repo, bun, repo)); err != nil {
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
