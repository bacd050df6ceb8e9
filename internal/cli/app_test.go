package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/sysd"
)

func TestHelp(t *testing.T) {
	te := newTestEnv(t)
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		te.mustRun(ExitOK, args...)
		out := te.stdout.String()
		if !strings.HasPrefix(out, "bm2 runs Node.js and Bun web services") || !strings.Contains(out, "Exit codes:") {
			t.Fatalf("bm2 %v:\n%s", args, out)
		}
	}
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			te.mustRun(ExitOK, args...)
			out := te.stdout.String()
			if !strings.HasPrefix(out, "Usage: bm2 "+c.name) || !strings.Contains(out, "\nFlags:\n") ||
				!strings.Contains(out, "-h, --help") || !strings.Contains(out, "\nExample:\n  bm2") && !strings.Contains(out, "\nExample:\n  sudo bm2") && !strings.Contains(out, "\nExample:\n  cd ") {
				t.Fatalf("bm2 %v:\n%s", args, out)
			}
			if strings.Contains(out, "[=true|false]") {
				t.Fatalf("pflag noise in help:\n%s", out)
			}
		}
	}
	te.mustRun(ExitOK, "serve", "--help")
	if !strings.Contains(te.stdout.String(), "      --timeout duration   how long to wait for every instance to come online and be confirmed (default 1m0s)\n") {
		t.Fatalf("serve --help:\n%s", te.stdout.String())
	}
	te.mustRun(ExitOK, "list", "--help")
	if !strings.Contains(te.stdout.String(), "Aliases: ls\n") {
		t.Fatalf("list --help:\n%s", te.stdout.String())
	}
}

func TestUsageErrors(t *testing.T) {
	te := newTestEnv(t)
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"--frob"},
		{"list", "--frob"},
		{"serve", "--timeout", "soon"},
		{"serve", "a", "b"},
		{"start"},
		{"stop", "a", "b"},
		{"version", "extra"},
		{"help", "nope"},
		{"reload"},
		{"scale"},
		{"scale", "api"},
		{"scale", "api", "2", "3"},
		{"scale", "api", "-x"},
		{"logs"},
		{"logs", "a", "b"},
		{"events", "a", "b"},
		{"events", "Not_A-Name"},
	} {
		if code := te.run(args...); code != ExitUsage {
			t.Errorf("bm2 %v: exit %d, want %d\n%s", args, code, ExitUsage, te.stderr.String())
			continue
		}
		lines := strings.Split(strings.TrimSpace(te.stderr.String()), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "bm2: run `bm2 ") {
			t.Errorf("bm2 %v: no hint:\n%s", args, te.stderr.String())
		}
	}
	te.run("list", "--frob")
	if !strings.HasPrefix(te.stderr.String(), "bm2: list: unknown flag: --frob\nbm2: run `bm2 list --help` for its usage\n") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

func TestExitCode(t *testing.T) {
	conflict := &config.ConflictError{Project: "web", Holder: "api", ProjectPorts: config.PortRange{Lo: 3000, Hi: 3000}, HolderPorts: config.PortRange{Lo: 3000, Hi: 3003}}
	for _, tc := range []struct {
		err  error
		code int
	}{
		{nil, ExitOK},
		{errors.New("boom"), ExitFailure},
		{usageErr("x", "bad"), ExitUsage},
		{config.Errors{{File: "f", Msg: "m", Err: config.ErrValue}}, ExitInvalid},
		{fmt.Errorf("wrapped: %w", config.Errors{{File: "f", Msg: "m", Err: config.ErrValue}}), ExitInvalid},
		{conflict, ExitInvalid},
		{fail(control.NoProject, "h", errors.New("no such project")), ExitNoProject},
		{sysd.Unreachable(errors.New("dial")), ExitNoSystemd},
		{fmt.Errorf("start: %w", sysd.Unreachable(errors.New("dial"))), ExitNoSystemd},
		{withHint(sysd.Unreachable(errors.New("dial")), "hint only"), ExitNoSystemd},
		{withHint(errors.New("x"), "hint only"), ExitFailure},
		{fail(control.Failed, "outer", sysd.Unreachable(errors.New("dial"))), ExitFailure},
		{context.Canceled, ExitFailure},
	} {
		if got := ExitCode(tc.err); got != tc.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
	if conflict.Error() != "port conflict: web port range 3000~3000 overlaps api 3000~3003" {
		t.Fatal(conflict.Error())
	}
}

func TestMainReportsErrorsWithHints(t *testing.T) {
	te := newTestEnv(t)
	te.noSD = true
	te.write("etc/bm2/api.toml", "name = \"api\"\nscript = \"a.js\"\ncwd = \"/srv/api\"\nport = 3000\n")
	te.mustRun(ExitNoSystemd, "stop", "api")
	want := "bm2: systemd is not reachable: connect to the system bus: dial unix /run/dbus/system_bus_socket: connect: no such file or directory\n" +
		"bm2: bm2 needs systemd as PID 1 and its system bus (/run/dbus/system_bus_socket); is this host booted with systemd?\n"
	if te.stderr.String() != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", te.stderr.String(), want)
	}
}

func TestVersion(t *testing.T) {
	te := newTestEnv(t)
	for _, args := range [][]string{{"version"}, {"--version"}, {"-V"}} {
		te.mustRun(ExitOK, args...)
		if !strings.HasPrefix(te.stdout.String(), "bm2 ") || strings.Count(te.stdout.String(), "\n") != 1 {
			t.Fatalf("bm2 %v: %q", args, te.stdout.String())
		}
	}
}

// The package-level entry points work with nothing but streams.
func TestRunAndMainEntryPoints(t *testing.T) {
	var out, errOut strings.Builder
	if err := Run(context.Background(), []string{"version"}, Stdio{Out: &out, Err: &errOut}); err != nil || !strings.HasPrefix(out.String(), "bm2 ") {
		t.Fatalf("Run: %v %q", err, out.String())
	}
	if code := Main(context.Background(), []string{"--system", "nope"}, Stdio{Out: &out, Err: &errOut}); code != ExitUsage || !strings.Contains(errOut.String(), `bm2: unknown command "nope"`) {
		t.Fatalf("Main: %d %q", code, errOut.String())
	}
}
