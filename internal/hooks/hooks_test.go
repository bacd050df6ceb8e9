package hooks

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/journaltest"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/sysdtest"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/journal"
	"golang.org/x/sys/unix"
)

func runEnv(t *testing.T, dir, version string) (RunEnv, *strings.Builder, *[]string, *[]string) {
	var stderr strings.Builder
	var execd, environ []string
	env := RunEnv{
		Getenv:  func(k string) string { return "" },
		Stderr:  &stderr,
		Dirs:    []string{filepath.Join(dir, "none"), dir},
		Version: func(ctx context.Context, p string) (string, error) { return version + "\n", nil },
		Exec: func(argv0 string, argv, env []string) error {
			execd = append([]string{argv0}, argv...)
			environ = env
			return nil
		},
		Environ: func() []string { return []string{"BM2_APP_PORT=3000", "NODE_ENV=production"} },
		Getwd:   func() (string, error) { return dir, nil },
		UID:     os.Getuid(),
	}
	return env, &stderr, &execd, &environ
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
	env, stderr, execd, environ := runEnv(t, dir, "v24.0.0")
	os.WriteFile(filepath.Join(dir, ".env"), []byte("NODE_ENV=staging\nSECRET='s e'\nBM2_APP_PORT=1\n"), 0o600)
	if err := Run(context.Background(), []string{"node", "--env-file", filepath.Join(dir, ".env"), "--", "node", "server.js"}, env); err != nil {
		t.Fatal(err)
	}
	if strings.Join(*execd, " ") != node+" node server.js" {
		t.Errorf("exec %v", *execd)
	}
	// env_file over [env], bm2's own untouchable.
	if got := strings.Join(*environ, " "); got != "BM2_APP_PORT=3000 NODE_ENV=staging SECRET=s e" {
		t.Errorf("environment %q", got)
	}
	if !strings.Contains(stderr.String(), "env_file sets BM2_APP_PORT, which is bm2's own: ignored") {
		t.Errorf("stderr %q", stderr.String())
	}
}

func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	node := exe(t, dir, "node")
	env, stderr, execd, _ := runEnv(t, dir, "v20.20.2")
	err := Run(context.Background(), []string{"node", "--", node, "server.js"}, env)
	var ref *RefusedError
	if !errors.As(err, &ref) {
		t.Fatalf("Run = %v", err)
	}
	want := "runtime " + node + " is Node.js v20.20.2, below the floor 24.0.0"
	if !strings.Contains(stderr.String(), want) || len(*execd) != 0 {
		t.Errorf("stderr %q (want %q), exec %v", stderr.String(), want, *execd)
	}
	env, stderr, _, _ = runEnv(t, dir, "1.4.4")
	if err := Run(context.Background(), []string{"bun", "--", "bun", "i.ts"}, env); !errors.As(err, &ref) || !strings.Contains(stderr.String(), "runtime bun not found in") {
		t.Errorf("missing: %v %q", err, stderr.String())
	}
	// env_file that is a symlink: refused, nothing of its target read.
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("STOLEN=1\n"), 0o600)
	os.Symlink(secret, filepath.Join(dir, ".env"))
	env, stderr, _, _ = runEnv(t, dir, "v24.1.0")
	err = Run(context.Background(), []string{"node", "--env-file", filepath.Join(dir, ".env"), "--", node, "s.js"}, env)
	if !errors.As(err, &ref) || !strings.Contains(stderr.String(), "symbolic link") {
		t.Errorf("symlinked env_file: %v %q", err, stderr.String())
	}
}

func TestRunCachesVersion(t *testing.T) {
	dir := t.TempDir()
	node := exe(t, dir, "node")
	cacheDir := t.TempDir()
	env, _, execd, _ := runEnv(t, dir, "v24.1.0")
	env.Getenv = func(k string) string {
		if k == "RUNTIME_DIRECTORY" {
			return cacheDir
		}
		return ""
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
	env, _, execd, _ := runEnv(t, dir, "")
	env.Version = func(ctx context.Context, p string) (string, error) { return "", errors.New("no answer within 5s") }
	err := Run(context.Background(), []string{"bun", "--", "bun", "i.ts"}, env)
	var ref *RefusedError
	if err == nil || errors.As(err, &ref) || len(*execd) != 0 {
		t.Errorf("Run = %v (refused: %v)", err, errors.As(err, &ref))
	}
}

// fakeSD is systemd with these units; it records the resets (Reset) and
// the units read (Reads).
func fakeSD(units map[string]sysd.Status) *sysdtest.Systemd {
	return &sysdtest.Systemd{ByName: units}
}

// A clean stop gives the next start a fresh budget; a crash never resets
// (systemd would forget it and not restart).
func TestExitedResetsBudgetOnCleanStop(t *testing.T) {
	c := crashlog.Logs{Dir: t.TempDir()}
	for _, tc := range []struct {
		st    sysd.Status
		reset bool
	}{
		{sysd.Status{Result: "success", ExecMainCode: cldKilled, ExecMainStatus: 15}, true},
		{sysd.Status{Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 1}, false},
		{sysd.Status{Result: "timeout", ExecMainCode: cldKilled, ExecMainStatus: 9}, false},
	} {
		sd := fakeSD(map[string]sysd.Status{"bm2@api-0.service": tc.st})
		if err := Exited(context.Background(), "api-0", sd, time.Now(), c, &journaltest.Recorder{}, nil); err != nil {
			t.Fatal(err)
		}
		if reset := slices.Contains(sd.Reset, "bm2@api-0.service"); reset != tc.reset {
			t.Errorf("%+v: reset %v, want %v", tc.st, reset, tc.reset)
		}
	}
}

func TestExitedRecordsCrashes(t *testing.T) {
	c := crashlog.Logs{Dir: t.TempDir()}
	ev := &journaltest.Recorder{}
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	noRefusal := func(context.Context, sysd.Status) (reason.Reason, string) {
		t.Fatal("asked to verify a refusal")
		return "", ""
	}
	cases := []struct {
		st   sysd.Status
		want string
	}{
		{sysd.Status{Result: "success", ExecMainCode: cldExited}, ""},
		{sysd.Status{Result: "success", ExecMainCode: cldKilled, ExecMainStatus: 15}, ""},
		{sysd.Status{Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 1}, "reason=exited code=1"},
		{sysd.Status{Result: "signal", ExecMainCode: cldKilled, ExecMainStatus: 9}, "reason=killed signal=SIGKILL"},
		{sysd.Status{Result: "core-dump", ExecMainCode: cldDumped, ExecMainStatus: 11}, "reason=core_dumped signal=SIGSEGV"},
		{sysd.Status{Result: "oom-kill", ExecMainCode: cldKilled, ExecMainStatus: 9}, "reason=oom_killed signal=SIGKILL"},
	}
	for _, tc := range cases {
		sd := fakeSD(map[string]sysd.Status{"bm2@api-0.service": tc.st})
		if err := Exited(context.Background(), "api-0", sd, at, c, ev, noRefusal); err != nil {
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
	if len(ev.Got) != len(want) || ev.Got[0].Kind != journal.InstanceCrashed || ev.Got[0].Reason != reason.Exited || ev.Got[1].Signal != "SIGKILL" {
		t.Errorf("events %+v", ev.Got)
	}
}

// A run whose bind the port fence denied: the crash.log line and the
// event say which port, the one bm2 gives it, and port_env as the fix.
func TestExitedNamesTheDeniedBind(t *testing.T) {
	c := crashlog.Logs{Dir: t.TempDir()}
	ev := &journaltest.Recorder{}
	old := DeniedBind
	t.Cleanup(func() { DeniedBind = old })
	var asked string
	DeniedBind = func(unit string) int { asked = unit; return 3000 }
	st := sysd.Status{Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 1, Environment: []string{"BM2_APP_PORT=8085"}}
	if err := Exited(context.Background(), "api-0", fakeSD(map[string]sysd.Status{"bm2@api-0.service": st}), time.Now(), c, ev, nil); err != nil {
		t.Fatal(err)
	}
	if asked != "bm2@api-0.service" {
		t.Errorf("DeniedBind asked about %q", asked)
	}
	data, _ := os.ReadFile(c.Path("api", "api-0"))
	for _, want := range []string{"reason=exited code=1", `its bind to port 3000 was denied: bm2 gives it port 8085 (in BM2_APP_PORT)`, `add port_env = [\"PORT\"]`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("crash.log lacks %q:\n%s", want, data)
		}
	}
	if len(ev.Got) != 1 || !strings.Contains(ev.Got[0].Message, "port 3000 was denied") || !strings.Contains(ev.Got[0].Detail, "port_env") {
		t.Errorf("events %+v", ev.Got)
	}
	if d := DeniedText(4000, ""); !strings.Contains(d, "a worker") || !strings.Contains(d, "set port = 4000") {
		t.Errorf("a worker's: %s", d)
	}
}

// Exit status 78 is a refusal only when the root side finds something to
// refuse; then it says runtime_rejected with the reason it found itself.
func TestExitedRefusal(t *testing.T) {
	c := crashlog.Logs{Dir: t.TempDir()}
	ev := &journaltest.Recorder{}
	sd := fakeSD(map[string]sysd.Status{"bm2@api-1.service": {Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 78}})
	verdict := reason.RuntimeBelowFloor
	verify := func(context.Context, sysd.Status) (reason.Reason, string) {
		return verdict, "runtime x is Bun 1.3.14, below the floor 1.4.0"
	}
	if err := Exited(context.Background(), "api-1", sd, time.Now(), c, ev, verify); err != nil {
		t.Fatal(err)
	}
	if len(ev.Got) != 1 || ev.Got[0].Kind != journal.RuntimeRejected || ev.Got[0].Reason != reason.RuntimeBelowFloor {
		t.Fatalf("%+v", ev.Got)
	}
	if last, _ := c.Last("api", "api-1"); last.Reason != reason.RuntimeBelowFloor {
		t.Fatalf("crash.log %+v", last)
	}
	verdict = reason.Exited // the app exited 78 itself
	Exited(context.Background(), "api-1", sd, time.Now(), c, ev, verify)
	if ev.Got[1].Kind != journal.InstanceCrashed || ev.Got[1].Reason != reason.Exited {
		t.Fatalf("%+v", ev.Got[1])
	}
}

// The root side checks the env_file itself, as the user, and the
// runtime only through the confined asker: the hook never executes the
// runtime (a script here that leaves a marker when run).
func TestVerifyRefusal(t *testing.T) {
	dir, err := os.MkdirTemp("", "bm2-verify-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bun := filepath.Join(dir, "bun")
	marker := filepath.Join(dir, "ran")
	os.WriteFile(bun, []byte("#!/bin/sh\ntouch "+marker+"\necho 1.4.4\n"), 0o755)
	me := uint32(os.Getuid())
	st := sysd.Status{UID: me, GID: uint32(os.Getgid()), WorkingDirectory: dir,
		ExecStart: []string{"/usr/lib/bm2/bm2-probe", "run", "bun", "--", bun, "i.ts"}}
	answer, answerErr := "1.3.14\n", error(nil)
	var asked []string
	confined := func(ctx context.Context, s sysd.Status, path string) (string, error) {
		if s.UID != st.UID {
			t.Errorf("asked for uid %d", s.UID)
		}
		asked = append(asked, path)
		return answer, answerErr
	}
	verify := VerifyRefusalWith(confined)
	if r, msg := verify(context.Background(), st); r != reason.RuntimeBelowFloor || !strings.Contains(msg, "below the floor 1.4.0") {
		t.Fatalf("%s %s", r, msg)
	}
	answer = "1.4.4\n"
	if r, _ := verify(context.Background(), st); r != reason.Exited {
		t.Fatalf("nothing to refuse, got %s", r)
	}
	// The sandbox could not be asked: unconfirmed, never a run of our own.
	answerErr = errors.New("systemd-run: not found")
	if r, msg := verify(context.Background(), st); r != reason.Rejected || !strings.HasPrefix(msg, "unconfirmed: ") || !strings.Contains(msg, "systemd-run: not found") {
		t.Fatalf("unconfirmed: %s %s", r, msg)
	}
	answerErr = &jsruntime.NotRunError{Why: "no"}
	if r, msg := verify(context.Background(), st); r != reason.Rejected || !strings.HasPrefix(msg, "unconfirmed: ") {
		t.Fatalf("not run: %s %s", r, msg)
	}
	answerErr = nil
	st.ExecStart = []string{"/usr/lib/bm2/bm2-probe", "run", "bun", "--env-file", filepath.Join(dir, ".env"), "--", bun, "i.ts"}
	if r, msg := verify(context.Background(), st); r != reason.EnvFile || !strings.Contains(msg, "does not exist") {
		t.Fatalf("%s %s", r, msg)
	}
	st.ExecStart = []string{"/usr/lib/bm2/bm2-probe", "run", "bun", "--", filepath.Join(dir, "gone"), "i.ts"}
	if r, _ := verify(context.Background(), st); r != reason.RuntimeMissing {
		t.Fatalf("%s", r)
	}
	if len(asked) != 4 || asked[0] != bun {
		t.Errorf("confined asks: %q", asked)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the hook executed the runtime itself")
	}
}

// The real confined asker reads the instance's unit files and hands
// their sandbox to systemd-run; without a unit file it runs nothing.
func TestConfinedVersionNeedsUnitFiles(t *testing.T) {
	if _, err := ConfinedVersion(context.Background(), sysd.Status{}, "/bin/true"); err == nil {
		t.Error("ran without the instance's unit files")
	}
	if _, err := ConfinedVersion(context.Background(), sysd.Status{FragmentPath: filepath.Join(t.TempDir(), "gone.service")}, "/bin/true"); err == nil {
		t.Error("ran without the instance's unit files")
	}
}

func TestFailed(t *testing.T) {
	dir := t.TempDir()
	st, c, ev := state.Dir{Path: filepath.Join(dir, "lib")}, crashlog.Logs{Dir: dir}, &journaltest.Recorder{}
	sd := fakeSD(map[string]sysd.Status{
		"bm2@api-1.service": {ActiveState: "failed", Result: "exit-code", NRestarts: 3, ExecMainCode: cldExited, ExecMainStatus: 1},
		"bm2@api-2.service": {ActiveState: "failed", Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 78},
		"bm2@api-3.service": {ActiveState: "failed", Result: "timeout", NRestarts: 5},
		// Stopped on purpose, by SIGKILL after stop_timeout_ms.
		"bm2@api-5.service": {ActiveState: "failed", Result: "timeout"},
		// Its stop timed out inside a restart job, which starts it again.
		"bm2@api-4.service": {ActiveState: "failed", Result: "timeout", JobPending: true},
	})
	for _, id := range []string{"api-4", "api-5"} {
		if err := Failed(context.Background(), id, sd, time.Now(), st, c, ev, nil); err != nil || len(ev.Got) != 0 {
			t.Fatalf("%s recorded as given up: %v %+v", id, err, ev.Got)
		}
	}
	if err := Failed(context.Background(), "api-1", sd, time.Now(), st, c, ev, nil); err != nil {
		t.Fatal(err)
	}
	if len(ev.Got) != 1 || ev.Got[0].Kind != journal.InstanceErrored || ev.Got[0].Reason != reason.Budget || ev.Got[0].Restarts != "3" {
		t.Errorf("events %+v", ev.Got)
	}
	data, _ := os.ReadFile(c.Path("api", "api-1"))
	if !strings.Contains(string(data), "reason=restart_budget_exhausted") {
		t.Errorf("crash.log %q", data)
	}
	// A refusal (exit status 78) is judged here, off the stop path: the
	// exit hook left it (Later).
	if err := Exited(context.Background(), "api-2", sd, time.Now(), c, ev, Later); err != nil || len(ev.Got) != 1 {
		t.Fatalf("the exit hook recorded a refusal it leaves to the failure hook: %v %+v", err, ev.Got[1:])
	}
	missing := func(context.Context, sysd.Status) (reason.Reason, string) {
		return reason.RuntimeMissing, "runtime /opt/node/bin/node does not exist"
	}
	Failed(context.Background(), "api-2", sd, time.Now(), st, c, ev, missing)
	if len(ev.Got) != 3 || ev.Got[1].Kind != journal.RuntimeRejected || ev.Got[1].Reason != reason.RuntimeMissing ||
		!strings.Contains(ev.Got[1].Message, "/opt/node/bin/node does not exist") ||
		ev.Got[2].Kind != journal.InstanceErrored || ev.Got[2].Reason != reason.RuntimeMissing {
		t.Errorf("refusal recorded as %+v", ev.Got[1:])
	}
	if last, ok := c.Last("api", "api-2"); !ok || last.Reason != reason.RuntimeMissing {
		t.Errorf("crash.log ends with %+v", last)
	}
	// An app that exited with 78 itself: a crash, then given up, as exited.
	itself := func(context.Context, sysd.Status) (reason.Reason, string) {
		return reason.Exited, "bm2 found nothing to refuse"
	}
	ev.Got = ev.Got[:1]
	Failed(context.Background(), "api-2", sd, time.Now(), st, c, ev, itself)
	if len(ev.Got) != 3 || ev.Got[1].Kind != journal.InstanceCrashed || ev.Got[1].ExitStatus != "78" ||
		ev.Got[2].Reason != reason.Exited || !strings.Contains(ev.Got[2].Message, "never restarts") {
		t.Errorf("an app's own 78 recorded as %+v", ev.Got[1:])
	}
	// A project stopped on purpose already says why: nothing more.
	st.SetErrored("api", "reuseport_missing")
	Failed(context.Background(), "api-3", sd, time.Now(), st, c, ev, nil)
	if len(ev.Got) != 3 {
		t.Errorf("errored project got more events: %+v", ev.Got[3:])
	}
}

// systemd's own "cannot start" statuses get a reason of their own, from
// the exit hook and from the failure hook alike.
func TestSpawnFailures(t *testing.T) {
	dir := t.TempDir()
	st, c, ev := state.Dir{Path: filepath.Join(dir, "lib")}, crashlog.Logs{Dir: dir}, &journaltest.Recorder{}
	sd := fakeSD(map[string]sysd.Status{
		"bm2@api-0.service": {ActiveState: "failed", Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 200, WorkingDirectory: "/srv/gone"},
		"bm2@api-1.service": {ActiveState: "failed", Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 217, User: "deploy"},
	})
	noVerify := func(context.Context, sysd.Status) (reason.Reason, string) { t.Fatal("verified"); return "", "" }
	for id, want := range map[string]string{"api-0": "working directory /srv/gone does not exist", "api-1": "user deploy does not exist"} {
		ev.Got = nil
		if err := Exited(context.Background(), id, sd, time.Now(), c, ev, noVerify); err != nil {
			t.Fatal(err)
		}
		if len(ev.Got) != 1 || !strings.Contains(ev.Got[0].Message, want) || ev.Got[0].Detail == "" {
			t.Errorf("%s exit: %+v", id, ev.Got)
		}
		ev.Got = nil
		if err := Failed(context.Background(), id, sd, time.Now(), st, c, ev, nil); err != nil {
			t.Fatal(err)
		}
		reason := map[string]reason.Reason{"api-0": reason.CwdMissing, "api-1": reason.UserMissing}[id]
		if len(ev.Got) != 1 || ev.Got[0].Reason != reason || !strings.Contains(ev.Got[0].Message, want) || !strings.Contains(ev.Got[0].Message, "`bm2 start api`") {
			t.Errorf("%s failure: %+v", id, ev.Got)
		}
		if last, ok := c.Last("api", id); !ok || last.Reason != reason {
			t.Errorf("%s crash.log last %+v", id, last)
		}
	}
}

// A failed instance whose port another user's process holds is errored
// as port_in_use, once, naming the holder: that instance only, under the
// runtime state directory (a reboot looks again), never the project or
// its neighbours (a squatter must not stop a project). Its own user's
// listeners (a sibling), a clean stop and a refusal are none of that.
func TestPortBlocked(t *testing.T) {
	dir := t.TempDir()
	st, c, ev := state.Dir{Path: filepath.Join(dir, "lib"), Run: filepath.Join(dir, "run")}, crashlog.Logs{Dir: dir}, &journaltest.Recorder{}
	env := []string{"BM2_APP_PORT=3100"}
	sd := fakeSD(map[string]sysd.Status{
		"bm2@api-0.service": {ActiveState: "deactivating", Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 1, UID: 61000, Environment: env},
		"bm2@api-1.service": {ActiveState: "deactivating", Result: "success", UID: 61000, Environment: env},
		"bm2@api-2.service": {ActiveState: "deactivating", Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 78, UID: 61000, Environment: env},
		"bm2@api-3.service": {ActiveState: "failed", Result: "exit-code", NRestarts: 16, ExecMainCode: cldExited, ExecMainStatus: 1, UID: 61000, Environment: env},
	})
	var asked []uint32
	holder := func(port int, uid uint32) (string, bool) {
		asked = append(asked, uid)
		return "python3\x1b[2J (pid 812), uid 65534 (nobody)", port == 3100 && uid != 65534
	}
	for _, id := range []string{"api-1", "api-2"} {
		if err := PortBlocked(context.Background(), id, sd, time.Now(), st, c, ev, holder); err != nil || len(ev.Got) != 0 {
			t.Fatalf("%s: %v %+v", id, err, ev.Got)
		}
	}
	if err := PortBlocked(context.Background(), "api-0", sd, time.Now(), st, c, ev, holder); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != 61000 {
		t.Errorf("holder asked for %v", asked)
	}
	if len(ev.Got) != 1 || ev.Got[0].Kind != journal.InstanceErrored || ev.Got[0].Reason != reason.PortInUse || ev.Got[0].Port != 3100 ||
		ev.Got[0].Instance != "api-0" || !strings.Contains(ev.Got[0].Message, "port 3100 is held by python3\\x1b[2J (pid 812), uid 65534 (nobody), not by api") ||
		!strings.Contains(ev.Got[0].Message, "bm2 keeps api-0 from starting again") {
		t.Errorf("events %+v", ev.Got)
	}
	if reason, ok, _ := st.Errored("api"); ok {
		t.Errorf("the project is errored (%s): a squatter on one port stops every instance", reason)
	}
	m, ok, err := st.InstanceErrored("api-0")
	if err != nil || !ok || m.Reason != "port_in_use" || m.Detail != "python3\\x1b[2J (pid 812), uid 65534 (nobody)" {
		t.Errorf("instance mark %+v %v %v", m, ok, err)
	}
	if !strings.HasPrefix(st.InstanceErroredPath("api-0"), st.Run+"/") {
		t.Errorf("mark %s outlives a reboot", st.InstanceErroredPath("api-0"))
	}
	for _, n := range []string{"api-1", "api-2"} {
		if _, ok, _ := st.InstanceErrored(n); ok {
			t.Errorf("neighbour %s is errored", n)
		}
	}
	// Once: the same instance's next failure finds it errored.
	if err := PortBlocked(context.Background(), "api-0", sd, time.Now(), st, c, ev, holder); err != nil || len(ev.Got) != 1 {
		t.Errorf("second time: %v %d events", err, len(ev.Got))
	}
	// A neighbour that fails on the same squatted port gets its own mark.
	if err := PortBlocked(context.Background(), "api-3", sd, time.Now(), st, c, ev, holder); err != nil || len(ev.Got) != 2 || ev.Got[1].Instance != "api-3" {
		t.Errorf("api-3: %v %+v", err, ev.Got)
	}
	// The failure hook of a marked instance adds nothing: the mark says why.
	ev.Got = nil
	if err := Failed(context.Background(), "api-3", sd, time.Now(), st, c, ev, nil); err != nil || len(ev.Got) != 0 {
		t.Errorf("Failed of a marked instance: %v %+v", err, ev.Got)
	}
}

// Only a foreign listener that keeps the app from its wildcard bind, and
// only while none of the app's own sockets listens, is taken for the
// cause of an exit (port_in_use): any user may listen on [::1]:PORT
// beside an app on 0.0.0.0, and must not be able to make it errored.
func TestBlocking(t *testing.T) {
	v4 := sockdiag.Listener{Family: unix.AF_INET, Addr: netip.MustParseAddr("0.0.0.0"), UID: 1002}
	lo6 := sockdiag.Listener{Family: unix.AF_INET6, Addr: netip.MustParseAddr("::1"), UID: 1002}
	any6 := sockdiag.Listener{Family: unix.AF_INET6, Addr: netip.MustParseAddr("::"), UID: 1002}
	lo4 := sockdiag.Listener{Family: unix.AF_INET, Addr: netip.MustParseAddr("127.0.0.1"), UID: 1002}
	own := sockdiag.Listener{Family: unix.AF_INET6, Addr: netip.MustParseAddr("::"), UID: 1001}
	for _, c := range []struct {
		name string
		ls   []sockdiag.Listener
		want bool
	}{
		{"none", nil, false},
		{"IPv4 wildcard", []sockdiag.Listener{v4}, true},
		{"IPv4 loopback", []sockdiag.Listener{lo4}, true},
		{"IPv6 wildcard", []sockdiag.Listener{any6}, true},
		{"IPv6 loopback only", []sockdiag.Listener{lo6}, false},
		{"the app's own instances listen", []sockdiag.Listener{v4, own}, false},
	} {
		if _, got := Blocking(c.ls, 1001); got != c.want {
			t.Errorf("%s: Blocking = %v, want %v", c.name, got, c.want)
		}
	}
}

// An app that runs as root gets no runtime someone else can replace: the
// wrapper refuses it without running it (not even --version), and the
// exit hook confirms that refusal without running it either.
func TestRootRefusesReplaceableRuntime(t *testing.T) {
	testutil.Root(t)
	dir, err := os.MkdirTemp("", "bm2-rootrt-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	node := filepath.Join(dir, "node")
	marker := filepath.Join(dir, "ran")
	os.WriteFile(node, []byte("#!/bin/sh\ntouch "+marker+"\necho v24.1.0\n"), 0o755)
	os.Chown(node, 65534, 65534)

	env, stderr, execd, _ := runEnv(t, dir, "v24.1.0")
	env.UID = 0
	asked := false
	env.Version = func(ctx context.Context, p string) (string, error) { asked = true; return "v24.1.0\n", nil }
	env.Replaceable = jsruntime.Replaceable
	err = Run(context.Background(), []string{"node", "--", node, "server.js"}, env)
	var ref *RefusedError
	if !errors.As(err, &ref) || asked || len(*execd) != 0 || !strings.Contains(stderr.String(), "bm2 runs no such binary as root") {
		t.Fatalf("Run as root = %v, asked %v, exec %v, stderr %q", err, asked, *execd, stderr.String())
	}
	// As another user the same runtime runs.
	env.UID = 1000
	if err := Run(context.Background(), []string{"node", "--", node, "server.js"}, env); err != nil || len(*execd) == 0 {
		t.Fatalf("Run as a user = %v, exec %v", err, *execd)
	}

	st := sysd.Status{UID: 0, GID: 0, User: "root", WorkingDirectory: dir,
		ExecStart: []string{"/usr/lib/bm2/bm2-probe", "run", "node", "--", node, "server.js"}}
	verify := VerifyRefusalWith(func(ctx context.Context, s sysd.Status, path string) (string, error) {
		t.Errorf("asked %s as root", path)
		return "v24.1.0\n", nil
	})
	if r, msg := verify(context.Background(), st); r != reason.RuntimeMissing || !strings.Contains(msg, "bm2 runs no such binary as root") {
		t.Errorf("verify = %s %s", r, msg)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the runtime ran")
	}
}

// The port fence fails closed: an instance its root fence step marked
// errored (port_fence_failed) is refused by the run wrapper, which never
// execs the app, and the exit hook takes the mark for the cause; an
// unmarked neighbour starts.
func TestRunRefusesAMarkedInstance(t *testing.T) {
	dir := t.TempDir()
	node := exe(t, dir, "node")
	run := filepath.Join(dir, "run", "bm2")
	sdir := state.Dir{Path: run, Run: run}
	if _, err := sdir.SetInstanceErrored("api-0", state.Mark{Reason: "port_fence_failed", Detail: "attach bind4: no memory"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		inst    string
		refused bool
	}{{"api-0", true}, {"api-1", false}} {
		env, stderr, execd, _ := runEnv(t, dir, "v24.1.0")
		env.Getenv = func(k string) string {
			if k == "RUNTIME_DIRECTORY" {
				return filepath.Join(run, c.inst)
			}
			return ""
		}
		err := Run(context.Background(), []string{"node", "--", node, "s.js"}, env)
		var refused *RefusedError
		if got := errors.As(err, &refused); got != c.refused || (len(*execd) > 0) == c.refused {
			t.Fatalf("%s: err %v, exec'd %q, stderr %q", c.inst, err, *execd, stderr.String())
		}
		if c.refused && !strings.Contains(stderr.String(), "api-0 is marked errored (port_fence_failed: attach bind4: no memory)") {
			t.Errorf("stderr %q", stderr.String())
		}
	}
	verify := MarkedOr(sdir, "api-0", func(context.Context, sysd.Status) (reason.Reason, string) { return reason.Exited, "asked" })
	if r, msg := verify(context.Background(), sysd.Status{}); r != reason.FenceFailed || !r.Refusal() || !strings.Contains(msg, "no memory") {
		t.Errorf("marked: %s %q", r, msg)
	}
	if r, _ := MarkedOr(sdir, "api-1", func(context.Context, sysd.Status) (reason.Reason, string) { return reason.Exited, "asked" })(context.Background(), sysd.Status{}); r != reason.Exited {
		t.Errorf("unmarked: %s", r)
	}
}

// underFile is a path whose parent is a regular file: writing there fails
// with ENOTDIR, as root too (a read-only directory does not stop root),
// the way a full /var/log fails with ENOSPC.
func underFile(t *testing.T, name string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(f, name)
}

// A crash.log line that cannot be written is said (state_write_failed,
// with the log's path and the errno the kernel gave) after the crash's
// own event, and fails neither hook: the crash is still recorded in the
// journal, the exit hook leaves the budget alone (no reset after a crash:
// systemd restarts the instance), and the failure hook still says the
// instance gave up.
func TestCrashLogUnwritable(t *testing.T) {
	c, ev := crashlog.Logs{Dir: underFile(t, "log")}, &journaltest.Recorder{}
	st := state.Dir{Path: t.TempDir(), Run: t.TempDir()}
	sd := fakeSD(map[string]sysd.Status{
		"bm2@api-0.service": {ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 1},
		"bm2@api-1.service": {ActiveState: "failed", Result: "exit-code", NRestarts: 3, ExecMainCode: cldExited, ExecMainStatus: 1},
	})
	noVerify := func(context.Context, sysd.Status) (reason.Reason, string) { t.Fatal("verified"); return "", "" }
	check := func(hook string, kind journal.Kind, id string, why reason.Reason) {
		t.Helper()
		if len(ev.Got) != 2 || ev.Got[0].Kind != kind || ev.Got[0].Instance != id {
			t.Fatalf("%s: events %+v, want %s, then state_write_failed", hook, ev.Got, kind)
		}
		w := ev.Got[1]
		path := c.Path("api", id)
		if w.Kind != journal.StateWriteFailed || w.Project != "api" || w.Instance != id || w.Path != path || w.Errno != "ENOTDIR" ||
			!strings.Contains(w.Message, id+": "+path+" could not be written (ENOTDIR, not a directory)") ||
			!strings.Contains(w.Message, "reason="+string(why)) || !strings.Contains(w.Detail, "not a directory") {
			t.Errorf("%s: state_write_failed %+v", hook, w)
		}
	}
	if err := Exited(context.Background(), "api-0", sd, time.Now(), c, ev, noVerify); err != nil {
		t.Fatalf("exit hook failed on a crash.log it could not write: %v", err)
	}
	check("exit hook", journal.InstanceCrashed, "api-0", reason.Exited)
	if reset := slices.Contains(sd.Reset, "bm2@api-0.service"); reset {
		t.Error("the crash reset the restart budget")
	}
	ev.Got = nil
	if err := Failed(context.Background(), "api-1", sd, time.Now(), st, c, ev, nil); err != nil {
		t.Fatalf("failure hook failed on a crash.log it could not write: %v", err)
	}
	check("failure hook", journal.InstanceErrored, "api-1", reason.Budget)

	// A failure that cannot be said either is the hook's error.
	broken := failingSink{}
	if err := Exited(context.Background(), "api-0", sd, time.Now(), c, broken, noVerify); err == nil || !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("unsaid: %v", err)
	}
}

type failingSink struct{}

func (failingSink) Emit(journal.Event) error { return errors.New("journald is gone") }

// An instance mark that cannot be written (a full /run) is said, and the
// exit hook does not claim the instance is kept down: it goes on through
// its restart budget.
func TestPortBlockedMarkUnwritable(t *testing.T) {
	st, c, ev := state.Dir{Path: t.TempDir(), Run: underFile(t, "run")}, crashlog.Logs{Dir: t.TempDir()}, &journaltest.Recorder{}
	sd := fakeSD(map[string]sysd.Status{"bm2@api-0.service": {ActiveState: "deactivating", Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 1,
		UID: 61000, Environment: []string{"BM2_APP_PORT=3100"}}})
	holder := func(port int, uid uint32) (string, bool) { return "python3 (pid 812), uid 65534 (nobody)", true }
	if err := PortBlocked(context.Background(), "api-0", sd, time.Now(), st, c, ev, holder); err != nil {
		t.Fatalf("PortBlocked: %v", err)
	}
	if len(ev.Got) != 1 {
		t.Fatalf("events %+v, want one state_write_failed", ev.Got)
	}
	w := ev.Got[0]
	if w.Kind != journal.StateWriteFailed || w.Instance != "api-0" || w.Path != st.InstanceErroredPath("api-0") || w.Errno != "ENOTDIR" ||
		!strings.Contains(w.Message, "port 3100 is held by python3 (pid 812), uid 65534 (nobody), but nothing keeps api-0 from starting again") {
		t.Errorf("state_write_failed %+v", w)
	}
	if _, ok, _ := st.InstanceErrored("api-0"); ok {
		t.Error("marked")
	}
}

// The exit hook's two halves read the crashed instance once, and judge
// the same state.
func TestExitHookReadsTheUnitOnce(t *testing.T) {
	unit := "bm2@api-0.service"
	sd := fakeSD(map[string]sysd.Status{unit: {Result: "exit-code", ExecMainCode: cldExited, ExecMainStatus: 1, UID: 1000, GID: 1000,
		Environment: []string{"BM2_APP_PORT=3000"}}})
	one := ReadOnce(sd)
	events := &journaltest.Recorder{}
	crashes := crashlog.Logs{Dir: t.TempDir()}
	if err := Exited(context.Background(), "api-0", one, time.Now(), crashes, events, nil); err != nil {
		t.Fatal(err)
	}
	held := func(port int, uid uint32) (string, bool) { return "", false }
	if err := PortBlocked(context.Background(), "api-0", one, time.Now(), state.Dir{Path: t.TempDir()}, crashes, events, held); err != nil {
		t.Fatal(err)
	}
	reads := 0
	for _, r := range sd.Reads() {
		if r == unit {
			reads++
		}
	}
	if reads != 1 {
		t.Fatalf("%d reads of %s, want 1", reads, unit)
	}
	if len(events.Got) != 1 || events.Got[0].Kind != journal.InstanceCrashed {
		t.Fatalf("events %+v, want one instance_crashed", events.Got)
	}
}
