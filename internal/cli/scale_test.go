package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/state"
)

// scaleEnv serves api (cluster, port 3000) with n instances and forgets
// the calls serve made.
func scaleEnv(t *testing.T, n string) *testEnv {
	t.Helper()
	return reloadEnv(t, strings.Replace(seedAPI, "instances = 4", "instances = "+n, 1))
}

// fileState is a file's bytes and identity, to tell whether it was
// rewritten (safefs.Write renames a new file into place).
type fileState struct {
	data string
	info os.FileInfo
}

func stat(t *testing.T, path string) fileState {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{string(data), st}
}

func (f fileState) same(g fileState) bool {
	return f.data == g.data && os.SameFile(f.info, g.info) && f.info.ModTime().Equal(g.info.ModTime())
}

// mainPIDs are the main PIDs of instances 0..n-1 of api.
func mainPIDs(t *testing.T, te *testEnv, n int) []uint32 {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = "bm2@api-" + string(rune('0'+i)) + ".service"
	}
	st, _ := te.sd.Units(t.Context(), names)
	out := make([]uint32, n)
	for i, u := range st {
		out[i] = u.MainPID
	}
	return out
}

// Scaling up writes instances = and starts the new instances only: the
// ones that stay are neither restarted nor stopped, and the private part
// is not touched.
func TestScaleUpStartsOnlyNew(t *testing.T) {
	te := scaleEnv(t, "2")
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	priv := filepath.Join(te.paths.ConfigDir, "private", "api.toml")
	before, privBefore := stat(t, reg), stat(t, priv)
	pids := mainPIDs(t, te, 2)

	te.mustRun(ExitOK, "scale", "api", "4")
	wantCalls := []string{
		"reload",
		"reset-failed bm2@api-2.service", "reset-failed bm2@api-3.service",
		"start bm2@api-2.service", "start bm2@api-3.service",
	}
	if got := te.sd.Calls(); !reflect.DeepEqual(got, wantCalls) {
		t.Fatalf("calls %q\nwant %q", got, wantCalls)
	}
	out := te.stdout.String()
	wantOut := "updated " + reg + ": instances = 4 (was 2)\n" +
		"starting bm2@api-2.service, bm2@api-3.service\n" +
		"api-2 online (pid 1003)\napi-3 online (pid 1004)\n" +
		"api-2 confirmed (reusePort)\napi-3 confirmed (reusePort)\n" +
		"scaled api from 2 to 4 instances: api-2, api-3 online and confirmed\n"
	if out != wantOut {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", out, wantOut, te.stderr.String())
	}
	after := stat(t, reg)
	if want := strings.Replace(before.data, "instances = 2\n", "instances = 4\n", 1); after.data != want {
		t.Fatalf("registered file:\n%s\nwant:\n%s", after.data, want)
	}
	if !stat(t, priv).same(privBefore) {
		t.Fatal("the private part was rewritten")
	}
	if got := mainPIDs(t, te, 4); got[0] != pids[0] || got[1] != pids[1] || got[2] == 0 || got[3] == 0 {
		t.Fatalf("pids %v, before %v", got, pids)
	}
	// bm2 list reads the new count from the file, and systemd's target
	// wants every instance.
	te.mustRun(ExitOK, "list", "api")
	if n := strings.Count(te.stdout.String(), "confirmed"); n != 4 {
		t.Fatalf("list shows %d confirmed instances:\n%s", n, te.stdout.String())
	}
	if ts, _ := te.sd.Units(t.Context(), []string{"bm2-api.target"}); len(ts[0].Wants) != 4 {
		t.Fatalf("target wants %v", ts[0].Wants)
	}
}

// Scaling down stops the instances above the new count, the highest
// first, with a normal stop, and nothing else.
func TestScaleDownStopsOnlyExtra(t *testing.T) {
	te := scaleEnv(t, "4")
	pids := mainPIDs(t, te, 4)
	te.mustRun(ExitOK, "scale", "api", "2")
	// Stopped before systemd reloads, while their units still have the
	// project's settings (stop_timeout_ms).
	wantCalls := []string{
		"stop bm2@api-3.service", "reset-failed bm2@api-3.service",
		"stop bm2@api-2.service", "reset-failed bm2@api-2.service",
		"reload",
	}
	if got := te.sd.Calls(); !reflect.DeepEqual(got, wantCalls) {
		t.Fatalf("calls %q\nwant %q", got, wantCalls)
	}
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	wantOut := "updated " + reg + ": instances = 2 (was 4)\nstopped api-3\nstopped api-2\n" +
		"scaled api from 4 to 2 instances: stopped api-2, api-3\n"
	if got := te.stdout.String(); got != wantOut {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, wantOut)
	}
	got := mainPIDs(t, te, 4)
	if got[0] != pids[0] || got[1] != pids[1] || got[2] != 0 || got[3] != 0 {
		t.Fatalf("pids %v, before %v", got, pids)
	}
	if data, _ := os.ReadFile(reg); !strings.Contains(string(data), "\ninstances = 2\n") {
		t.Fatalf("registered file:\n%s", data)
	}
}

// The same count changes nothing: no file written, no systemd job.
func TestScaleSameCountIsNoOp(t *testing.T) {
	te := scaleEnv(t, "4")
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	before := stat(t, reg)
	for _, n := range []string{"4", "+0", "-0"} {
		te.mustRun(ExitOK, "scale", "api", n)
		if got := te.stdout.String(); got != "api already has 4 instances\n" {
			t.Fatalf("scale api %s: stdout:\n%s", n, got)
		}
		if calls := te.sd.Calls(); len(calls) != 0 {
			t.Fatalf("scale api %s: calls %q", n, calls)
		}
	}
	if !stat(t, reg).same(before) {
		t.Fatal("the registered file was rewritten")
	}
}

// +N and -N count from the registered number; "-1" is an argument, not
// a flag.
func TestScaleRelative(t *testing.T) {
	te := scaleEnv(t, "2")
	te.mustRun(ExitOK, "scale", "api", "+2")
	if !strings.HasSuffix(te.stdout.String(), "scaled api from 2 to 4 instances: api-2, api-3 online and confirmed\n") {
		t.Fatalf("+2:\n%s", te.stdout.String())
	}
	te.sd.Calls()
	te.mustRun(ExitOK, "scale", "--timeout", "10s", "api", "-1")
	if !strings.HasSuffix(te.stdout.String(), "scaled api from 4 to 3 instances: stopped api-3\n") {
		t.Fatalf("-1:\n%s", te.stdout.String())
	}
	if got, want := te.sd.Calls(), []string{"stop bm2@api-3.service", "reset-failed bm2@api-3.service", "reload"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	// max is one per CPU (2 in these tests), as instances = "max".
	te.mustRun(ExitOK, "scale", "api", "max")
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	if data, _ := os.ReadFile(reg); !strings.Contains(string(data), "\ninstances = \"max\"\n") {
		t.Fatalf("registered file:\n%s", data)
	}
	if !strings.HasSuffix(te.stdout.String(), "scaled api from 3 to 2 instances: stopped api-2\n") {
		t.Fatalf("max:\n%s", te.stdout.String())
	}
	// +0 keeps "max"; 2, the same count as a number, writes it.
	before := stat(t, reg)
	te.mustRun(ExitOK, "scale", "api", "+0")
	if te.stdout.String() != "api already has 2 instances\n" || !stat(t, reg).same(before) {
		t.Fatalf("+0 on max:\n%s", te.stdout.String())
	}
	te.sd.Calls()
	te.mustRun(ExitOK, "scale", "api", "2")
	if data, _ := os.ReadFile(reg); !strings.Contains(string(data), "\ninstances = 2\n") {
		t.Fatalf("registered file:\n%s", data)
	}
	if got := te.stdout.String(); got != "updated "+reg+": instances = 2 (was \"max\", 2)\napi keeps 2 instances\n" {
		t.Fatalf("2 on max:\n%s", got)
	}
	if got := te.sd.Calls(); !reflect.DeepEqual(got, []string{"reload"}) {
		t.Fatalf("calls %q", got)
	}
}

// A file written behind bm2's back that takes the new ports makes the
// generator skip the project: scale puts the previous file back, and the
// instances that ran keep running.
func TestScaleGeneratorSkips(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/web/bm2.toml", "name = \"web\"\nscript = \"a.js\"\ninstances = 2\nport = 4000\nexec_mode = \"fork\"\n"))
	te.mustRun(ExitOK, "serve", dir)
	te.sd.Calls()
	reg := filepath.Join(te.paths.ConfigDir, "web.toml")
	before := stat(t, reg)
	te.sd.beforeReload = func() {
		te.sd.beforeReload = nil
		te.write("etc/bm2/db.toml", "name = \"db\"\nscript = \"a.js\"\ncwd = \"/srv/db\"\nport = 4003\n")
	}
	if code := te.run("scale", "web", "4"); code != ExitInvalid {
		t.Fatalf("exit %d\n%s\n%s", code, te.stdout.String(), te.stderr.String())
	}
	if !strings.Contains(te.stdout.String(), "put the previous "+reg+" back: systemd did not take the new one\n") ||
		!strings.Contains(te.stderr.String(), "port conflict: web port range 4000~4003 overlaps db 4003~4003") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", te.stdout.String(), te.stderr.String())
	}
	if after := stat(t, reg); after.data != before.data {
		t.Fatalf("registered file:\n%s", after.data)
	}
	for _, c := range te.sd.Calls() {
		if c != "reload" {
			t.Fatalf("scale did %q after the generator skipped web", c)
		}
	}
	if st, _ := te.sd.Units(t.Context(), []string{"bm2@web-0.service", "bm2@web-1.service"}); st[0].MainPID == 0 || st[1].MainPID == 0 {
		t.Fatalf("web's instances stopped: %+v", st)
	}
}

// A count that is not one refuses before anything changes.
func TestScaleInvalidCount(t *testing.T) {
	te := scaleEnv(t, "2")
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	before := stat(t, reg)
	for n, want := range map[string]string{
		"0":                    "a project has at least 1 instance",
		"-2":                   "api has 2 instances: -2 would leave 0",
		"-5":                   "api has 2 instances: -5 would leave -3",
		"abc":                  `"abc" is not a number of instances`,
		"1.5":                  `"1.5" is not a number of instances`,
		"+":                    `"+" is not a number of instances`,
		"1025":                 "1025 is more instances than a project may have (1024)",
		"+1023":                "+1023 is more instances than a project may have (1024)",
		"99999999999999999999": "is more instances than a project may have",
	} {
		if code := te.run("scale", "api", n); code != ExitUsage {
			t.Errorf("scale api %s: exit %d, want %d\n%s", n, code, ExitUsage, te.stderr.String())
		}
		if !strings.Contains(te.stderr.String(), want) {
			t.Errorf("scale api %s: stderr lacks %q:\n%s", n, want, te.stderr.String())
		}
	}
	if calls := te.sd.Calls(); len(calls) != 0 {
		t.Fatalf("calls %q", calls)
	}
	if !stat(t, reg).same(before) {
		t.Fatal("the registered file was rewritten")
	}
	if code := te.run("scale", "api"); code != ExitUsage {
		t.Errorf("scale without a count: exit %d", code)
	}
}

func TestScaleUnregistered(t *testing.T) {
	te := scaleEnv(t, "2")
	if code := te.run("scale", "nope", "3"); code != ExitNoProject {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	if !strings.Contains(te.stderr.String(), "no such project: nope") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if calls := te.sd.Calls(); len(calls) != 0 {
		t.Fatalf("calls %q", calls)
	}
}

// In fork mode the range grows with the count: one over another
// project's ports is refused, with nothing written and systemd not
// touched; one that fits is applied.
func TestScaleForkConflict(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/db.toml", "name = \"db\"\nscript = \"a.js\"\ncwd = \"/srv/db\"\nport = 4003\n")
	dir := filepath.Dir(te.write("srv/web/bm2.toml", "name = \"web\"\nscript = \"a.js\"\ninstances = 2\nport = 4000\nexec_mode = \"fork\"\n"))
	te.mustRun(ExitOK, "serve", dir)
	te.sd.Calls()
	reg := filepath.Join(te.paths.ConfigDir, "web.toml")
	before := stat(t, reg)

	if code := te.run("scale", "web", "4"); code != ExitInvalid {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	if !strings.HasPrefix(te.stderr.String(), "bm2: port conflict: web port range 4000~4003 overlaps db 4003~4003; nothing was changed\n") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if !stat(t, reg).same(before) {
		t.Fatal("the registered file was rewritten")
	}
	if calls := te.sd.Calls(); len(calls) != 0 {
		t.Fatalf("calls %q", calls)
	}
	// Past the last port.
	te.write("srv/hi/bm2.toml", "name = \"hi\"\nscript = \"a.js\"\nport = 65535\nexec_mode = \"fork\"\n")
	te.mustRun(ExitOK, "serve", filepath.Join(te.root, "srv/hi"))
	if code := te.run("scale", "hi", "+1"); code != ExitInvalid || !strings.Contains(te.stderr.String(), "fork mode needs ports 65535~65536, past 65535") {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}

	te.sd.Calls()
	te.mustRun(ExitOK, "scale", "web", "3")
	if got, want := te.sd.Calls(), []string{"reload", "reset-failed bm2@web-2.service", "start bm2@web-2.service"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if !strings.HasSuffix(te.stdout.String(), "scaled web from 2 to 3 instances: web-2 online\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
}

// A registered file edited by hand, with comments of its author's, is
// not rewritten: scale names it, and once instances = is set there,
// scale with that count applies it without restarting anyone.
func TestScaleHandWrittenFile(t *testing.T) {
	te := scaleEnv(t, "2")
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	data, _ := os.ReadFile(reg)
	mine := strings.Replace(string(data), "port = 3000\n", "port = 3000 # behind nginx\n", 1)
	te.write("etc/bm2/api.toml", mine)
	before := stat(t, reg)

	if code := te.run("scale", "api", "3"); code != ExitFailure {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	wantErr := "bm2: " + reg + " was edited by hand and has comments that bm2 did not write; rewriting it would lose them, so bm2 scale leaves it alone\n" +
		"bm2: set instances = 3 in " + reg + " yourself, then run `bm2 scale api 3`: it applies the file's count without restarting the instances that stay\n"
	if got := te.stderr.String(); got != wantErr {
		t.Fatalf("stderr:\n%s\nwant:\n%s", got, wantErr)
	}
	if !stat(t, reg).same(before) {
		t.Fatal("the registered file was rewritten")
	}
	if calls := te.sd.Calls(); len(calls) != 0 {
		t.Fatalf("calls %q", calls)
	}

	// The operator sets it by hand; scale applies it, and leaves the file
	// as they wrote it.
	mine = strings.Replace(mine, "instances = 2\n", "instances = 3\n", 1)
	te.write("etc/bm2/api.toml", mine)
	te.mustRun(ExitOK, "scale", "api", "3")
	if got, want := te.sd.Calls(), []string{"reload", "reset-failed bm2@api-2.service", "start bm2@api-2.service"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if out := te.stdout.String(); !strings.HasPrefix(out, reg+" says 3 instances, systemd runs 2: applying it\n") ||
		!strings.HasSuffix(out, "scaled api from 2 to 3 instances: api-2 online and confirmed\n") {
		t.Fatalf("stdout:\n%s", out)
	}
	if data, _ := os.ReadFile(reg); string(data) != mine {
		t.Fatalf("rewritten:\n%s", data)
	}
	// Applied: the same count is a no-op now.
	te.mustRun(ExitOK, "scale", "api", "3")
	if te.stdout.String() != "api already has 3 instances\n" || len(te.sd.Calls()) != 0 {
		t.Fatalf("again:\n%s", te.stdout.String())
	}

	// A file written by hand without comments loses nothing in serve's
	// form, and is rewritten.
	te.write("etc/bm2/api.toml", strings.ReplaceAll(strings.TrimPrefix(strings.Replace(mine, " # behind nginx", "", 1), firstLines(mine, 2)), " = ", "="))
	te.mustRun(ExitOK, "scale", "api", "2")
	if data, _ := os.ReadFile(reg); !strings.HasPrefix(string(data), "# Registered by `bm2 serve`.") || !strings.Contains(string(data), "\ninstances = 2\n") {
		t.Fatalf("registered file:\n%s", data)
	}
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	end := 0
	for i := 0; i < n; i++ {
		end += strings.Index(s[end:], "\n") + 1
	}
	return s[:end]
}

// A project defined elsewhere on the search path is not bm2's to
// rewrite.
func TestScaleFileElsewhere(t *testing.T) {
	te := newTestEnv(t)
	te.write("usr/lib/bm2/pkg.toml", "name = \"pkg\"\nscript = \"a.js\"\ncwd = \"/srv/pkg\"\nport = 5000\n")
	if code := te.run("scale", "pkg", "2"); code != ExitFailure {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	if !strings.Contains(te.stderr.String(), "bm2 scale rewrites only what bm2 serve registered; nothing was changed") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if calls := te.sd.Calls(); len(calls) != 0 {
		t.Fatalf("calls %q", calls)
	}
}

// An errored project is refused, with its reason and how to bring it
// back.
func TestScaleErrored(t *testing.T) {
	te := scaleEnv(t, "2")
	if _, err := (state.Dir{Path: te.paths.StateDir}).SetErrored("api", "reuseport_missing"); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	before := stat(t, reg)
	if code := te.run("scale", "api", "4"); code != ExitFailure {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	if !strings.Contains(te.stderr.String(), "project api is errored (reuseport_missing): nothing was changed") ||
		!strings.Contains(te.stderr.String(), "`bm2 start api`") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if !stat(t, reg).same(before) || len(te.sd.Calls()) != 0 {
		t.Fatal("something changed")
	}
}

// A stopped project gets the new count, and starts with it.
func TestScaleStopped(t *testing.T) {
	te := scaleEnv(t, "2")
	te.mustRun(ExitOK, "stop", "api")
	te.sd.Calls()
	te.mustRun(ExitOK, "scale", "api", "3")
	if got, want := te.sd.Calls(), []string{"reload"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if !strings.HasSuffix(te.stdout.String(), "scaled api from 2 to 3 instances; it is stopped: `bm2 start api` starts them\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	te.mustRun(ExitOK, "start", "api")
	if !strings.Contains(te.stdout.String(), "api-2 confirmed (reusePort)") {
		t.Fatalf("start:\n%s", te.stdout.String())
	}
}

// While a reload (or another scale) holds the project's lock, scale is
// refused before anything changes.
func TestScaleLock(t *testing.T) {
	te := scaleEnv(t, "2")
	l, _, err := te.app().c.Projects().TryLockProject("api")
	if err != nil || l == nil {
		t.Fatal(l, err)
	}
	defer l.Unlock()
	if code := te.run("scale", "api", "3"); code != ExitFailure || !strings.Contains(te.stderr.String(), "is reloading or scaling api") {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	if len(te.sd.Calls()) != 0 {
		t.Fatal("systemd was touched")
	}
}

// bm2 serve in the project's dir sets the count its bm2.toml has, and
// says so: it never undoes a scale silently.
func TestServeAfterScaleSaysSo(t *testing.T) {
	te := scaleEnv(t, "2")
	te.mustRun(ExitOK, "scale", "api", "4")
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	src := filepath.Join(te.root, "srv/api/bm2.toml")
	te.mustRun(ExitOK, "serve", filepath.Dir(src))
	want := "note: " + reg + " has 4 instances (as `bm2 scale` may have set), " + src + " says 2: serving sets 2; to keep 4, set instances = 4 in " + src + "\n"
	if !strings.HasPrefix(te.stdout.String(), want) {
		t.Fatalf("stdout:\n%s\nwant first:\n%s", te.stdout.String(), want)
	}
}

// User scope works the same; its ports are checked against the system
// projects' too.
func TestScaleUserScope(t *testing.T) {
	te := userEnv(t)
	te.write("system-etc-bm2/sys.toml", "name = \"sys\"\nscript = \"a.js\"\ncwd = \"/srv/sys\"\nport = 8082\n")
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", "name = \"app\"\nscript = \"index.ts\"\ninstances = 2\nport = 8080\nexec_mode = \"fork\"\n"))
	te.mustRun(ExitOK, "serve", dir)
	te.sd.Calls()
	if code := te.run("scale", "app", "3"); code != ExitInvalid || !strings.Contains(te.stderr.String(), "overlaps system project sys") {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	if len(te.sd.Calls()) != 0 {
		t.Fatal("systemd was touched")
	}
	te.mustRun(ExitOK, "scale", "app", "1")
	if got, want := te.sd.Calls(), []string{"stop bm2@app-1.service", "reset-failed bm2@app-1.service", "reload"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if data, _ := os.ReadFile(filepath.Join(te.paths.ConfigDir, "app.toml")); !strings.Contains(string(data), "\ninstances = 1\n") {
		t.Fatalf("registered file:\n%s", data)
	}
}
