package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/state"
)

type sink struct{ got []journal.Event }

func (s *sink) Emit(e journal.Event) error { s.got = append(s.got, e); return nil }

func runEnv(t *testing.T, dir, version string) (RunEnv, *sink, *strings.Builder, *[]string) {
	ev := &sink{}
	var stderr strings.Builder
	var execd []string
	env := RunEnv{
		Getenv: func(k string) string {
			return map[string]string{"BM2_APP_NAME": "api", "BM2_APP_INSTANCE": "1"}[k]
		},
		Stderr:  &stderr,
		Events:  ev,
		Dirs:    []string{filepath.Join(dir, "none"), dir},
		Version: func(ctx context.Context, p string) (string, error) { return version + "\n", nil },
		Exec: func(argv0 string, argv, env []string) error {
			execd = append([]string{argv0}, argv...)
			return nil
		},
		Environ: func() []string { return nil },
	}
	return env, ev, &stderr, &execd
}

func exe(t *testing.T, dir, name string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunAcceptsAndExecs(t *testing.T) {
	dir := t.TempDir()
	node := exe(t, dir, "node")
	env, ev, _, execd := runEnv(t, dir, "v24.0.0")
	if err := Run(context.Background(), []string{"node", "--", "node", "server.js"}, env); err != nil {
		t.Fatal(err)
	}
	if strings.Join(*execd, " ") != node+" node server.js" || len(ev.got) != 0 {
		t.Errorf("exec %v, events %v", *execd, ev.got)
	}
}

func TestRunRefusesBelowFloor(t *testing.T) {
	dir := t.TempDir()
	node := exe(t, dir, "node")
	env, ev, stderr, execd := runEnv(t, dir, "v20.20.2")
	err := Run(context.Background(), []string{"node", "--", node, "server.js"}, env)
	var rej *RejectedError
	if !errors.As(err, &rej) || rej.Reason != "runtime_below_floor" {
		t.Fatalf("Run = %v", err)
	}
	want := "runtime " + node + " is Node.js v20.20.2, below the floor 24.0.0"
	if !strings.Contains(stderr.String(), want) || len(*execd) != 0 {
		t.Errorf("stderr %q (want %q), exec %v", stderr.String(), want, *execd)
	}
	if len(ev.got) != 1 || ev.got[0].Kind != journal.RuntimeRejected || ev.got[0].Instance != "api-1" {
		t.Errorf("events %+v", ev.got)
	}
	env, _, stderr, _ = runEnv(t, dir, "1.3.14")
	exe(t, dir, "bun")
	if err := Run(context.Background(), []string{"bun", "--", "bun", "i.ts"}, env); !errors.As(err, &rej) || !strings.Contains(stderr.String(), "Bun 1.3.14, below the floor 1.4.0") {
		t.Errorf("bun 1.3: %v %q", err, stderr.String())
	}
}

func TestRunRefusesMissing(t *testing.T) {
	dir := t.TempDir()
	env, ev, stderr, _ := runEnv(t, dir, "1.4.4")
	err := Run(context.Background(), []string{"bun", "--", "bun", "i.ts"}, env)
	var rej *RejectedError
	if !errors.As(err, &rej) || rej.Reason != "runtime_missing" || !strings.Contains(stderr.String(), "runtime bun not found in") || len(ev.got) != 1 {
		t.Errorf("Run = %v, stderr %q", err, stderr.String())
	}
	if err := Run(context.Background(), []string{"bun", "--", "/nope/bun", "i.ts"}, env); !errors.As(err, &rej) {
		t.Errorf("absolute missing: %v", err)
	}
}

func TestExitedRecordsCrashes(t *testing.T) {
	c := journal.CrashLog{Dir: t.TempDir()}
	ev := &sink{}
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	cases := []struct {
		x    ExitInfo
		want string
	}{
		{ExitInfo{"success", "exited", "0"}, ""},
		{ExitInfo{"success", "killed", "TERM"}, ""},
		{ExitInfo{"exit-code", "exited", "1"}, "reason=exited code=1"},
		{ExitInfo{"signal", "killed", "KILL"}, "reason=killed signal=SIGKILL"},
		{ExitInfo{"core-dump", "dumped", "SEGV"}, "reason=core_dumped signal=SIGSEGV"},
		{ExitInfo{"exit-code", "exited", "78"}, "reason=runtime_rejected code=78"},
		{ExitInfo{"oom-kill", "killed", "KILL"}, "reason=oom_killed signal=SIGKILL"},
	}
	for _, tc := range cases {
		if err := Exited("api-0", tc.x, at, c, ev); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(c.Path("api", "api-0"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var want []string
	for _, tc := range cases {
		if tc.want != "" {
			want = append(want, "2026-11-30T04:00:00.000Z "+tc.want)
		}
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("crash.log:\n%s\nwant:\n%s", data, strings.Join(want, "\n"))
	}
	if len(ev.got) != len(want) || ev.got[0].Kind != journal.InstanceCrashed || ev.got[0].Reason != "exited" {
		t.Errorf("events %+v", ev.got)
	}
}

func TestFailed(t *testing.T) {
	dir := t.TempDir()
	st, c, ev := state.Dir{Path: filepath.Join(dir, "lib")}, journal.CrashLog{Dir: dir}, &sink{}
	facts := func(f UnitFacts) func(context.Context, string) (UnitFacts, error) {
		return func(context.Context, string) (UnitFacts, error) { return f, nil }
	}
	if err := Failed(context.Background(), "api-1", facts(UnitFacts{Result: "exit-code", NRestarts: 3, ExitStatus: 1}), time.Now(), st, c, ev); err != nil {
		t.Fatal(err)
	}
	if len(ev.got) != 1 || ev.got[0].Kind != journal.InstanceErrored || ev.got[0].Reason != ReasonBudget || ev.got[0].Fields["BM2_RESTARTS"] != "3" {
		t.Errorf("events %+v", ev.got)
	}
	data, _ := os.ReadFile(c.Path("api", "api-1"))
	if !strings.Contains(string(data), "reason=restart_budget_exhausted") {
		t.Errorf("crash.log %q", data)
	}
	Failed(context.Background(), "api-2", facts(UnitFacts{Result: "exit-code", ExitStatus: 78}), time.Now(), st, c, ev)
	if ev.got[1].Reason != "runtime_rejected" {
		t.Errorf("runtime refusal recorded as %q", ev.got[1].Reason)
	}
	// A project stopped on purpose already says why: nothing more.
	st.SetErrored("api", "reuseport_missing")
	Failed(context.Background(), "api-3", facts(UnitFacts{Result: "timeout"}), time.Now(), st, c, ev)
	if len(ev.got) != 2 {
		t.Errorf("errored project got more events: %+v", ev.got[2:])
	}
}

func TestRunCachesVersion(t *testing.T) {
	dir := t.TempDir()
	node := exe(t, dir, "node")
	cacheDir := t.TempDir()
	env, _, _, execd := runEnv(t, dir, "v24.1.0")
	get := env.Getenv
	env.Getenv = func(k string) string {
		if k == "RUNTIME_DIRECTORY" {
			return cacheDir
		}
		return get(k)
	}
	asked := 0
	env.Version = func(ctx context.Context, p string) (string, error) { asked++; return "v24.1.0\n", nil }
	for i := 0; i < 3; i++ {
		if err := Run(context.Background(), []string{"node", "--", node, "s.js"}, env); err != nil {
			t.Fatal(err)
		}
	}
	if asked != 1 || len(*execd) == 0 {
		t.Errorf("asked the version %d times over 3 starts, want 1", asked)
	}
	// A different binary at the same path is asked again.
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(node, []byte("#!/bin/sh\n# new\n"), 0o755)
	Run(context.Background(), []string{"node", "--", node, "s.js"}, env)
	if asked != 2 {
		t.Errorf("a replaced binary was not asked again (asked %d)", asked)
	}
}

// A runtime that does not answer --version is a failure systemd retries,
// not a refusal for good.
func TestRunVersionFailureIsRetried(t *testing.T) {
	dir := t.TempDir()
	exe(t, dir, "bun")
	env, ev, _, execd := runEnv(t, dir, "")
	env.Version = func(ctx context.Context, p string) (string, error) { return "", errors.New("no answer within 5s") }
	err := Run(context.Background(), []string{"bun", "--", "bun", "i.ts"}, env)
	var rej *RejectedError
	if err == nil || errors.As(err, &rej) || len(ev.got) != 0 || len(*execd) != 0 {
		t.Errorf("Run = %v (rejected: %v), events %v", err, errors.As(err, &rej), ev.got)
	}
}
