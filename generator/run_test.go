package generator

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/testutil"
)

type recorder struct{ lines []string }

// systemScope pins system scope: tests run as root in CI and as a normal
// user elsewhere.
func systemScope() *layout.Layout { l := layout.System(); return &l }

func (r *recorder) Log(prio int, msg string) {
	r.lines = append(r.lines, fmt.Sprintf("<%d> %s", prio, msg))
}

func writeProject(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".toml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func project(name string, port int) string {
	return fmt.Sprintf("name = %q\nscript = \"index.js\"\ncwd = \"/srv/%s\"\nport = %d\n", name, name, port)
}

func TestRunWritesValidAndSkipsBroken(t *testing.T) {
	root := t.TempDir()
	etc, usr, out := filepath.Join(root, "etc"), filepath.Join(root, "usr"), filepath.Join(root, "out")
	writeProject(t, etc, "api", project("api", 3000))
	writeProject(t, etc, "bad", "name = \"bad\"\nport = 1\nwat = 2\n")
	writeProject(t, usr, "api", project("api", 4000))   // shadowed by etc/api.toml
	writeProject(t, usr, "zeta", project("zeta", 5000)) // only here
	writeProject(t, etc, "masked", "")
	writeProject(t, usr, "masked", project("masked", 6000))
	if err := os.Symlink(os.DevNull, filepath.Join(etc, "nulled.toml")); err != nil {
		t.Fatal(err)
	}
	writeProject(t, usr, "nulled", project("nulled", 7000))
	log := &recorder{}
	env := Env{Getenv: func(k string) string {
		if k == "BM2_CONFIG_PATH" {
			return etc + ":" + usr
		}
		return ""
	}, Log: log, NumCPU: 2, Layout: systemScope()}
	err := Run(context.Background(), []string{out, out + ".early", out + ".late"}, env)
	if !errors.Is(err, ErrSkipped) {
		t.Fatalf("Run = %v, want ErrSkipped", err)
	}
	mustExist := []string{"bm2-api.target", "bm2-zeta.target", "bm2@api-0.service.d/50-bm2.conf", "multi-user.target.wants/bm2-zeta.target"}
	for _, p := range mustExist {
		if _, err := os.Lstat(filepath.Join(out, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{"bm2-bad.target", "bm2-masked.target", "bm2-nulled.target"} {
		if _, err := os.Lstat(filepath.Join(out, p)); err == nil {
			t.Errorf("%s written", p)
		}
	}
	for _, dir := range []string{out + ".early", out + ".late"} {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s written; only the normal dir is used", dir)
		}
	}
	conf, _ := os.ReadFile(filepath.Join(out, "bm2@api-0.service.d/50-bm2.conf"))
	if !strings.Contains(string(conf), `BM2_APP_PORT=3000"`) {
		t.Errorf("/etc did not win over /usr:\n%s", conf)
	}
	if target, _ := os.Readlink(filepath.Join(out, "multi-user.target.wants/bm2-api.target")); target != "../bm2-api.target" {
		t.Errorf("wants symlink -> %q", target)
	}
	joined := strings.Join(log.lines, "\n")
	for _, want := range []string{
		"<3> skipped bad: " + filepath.Join(etc, "bad.toml") + ":3: wat: unknown key",
		"<3> skipped bad: " + filepath.Join(etc, "bad.toml") + ": script: required",
		"<4> generated 2 projects (2 instances), skipped 1",
		"<6> " + filepath.Join(etc, "masked.toml") + " masks project masked",
		"<6> " + filepath.Join(etc, "nulled.toml") + " masks project nulled",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("log lacks %q:\n%s", want, joined)
		}
	}
	// No temporary files are left behind.
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if strings.HasPrefix(filepath.Base(p), ".#") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestRunClean(t *testing.T) {
	etc, out := t.TempDir(), t.TempDir()
	writeProject(t, etc, "api", project("api", 3000))
	log := &recorder{}
	env := Env{Getenv: func(string) string { return etc }, Log: log, NumCPU: 1, Layout: systemScope()}
	if err := Run(context.Background(), []string{out}, env); err != nil {
		t.Fatal(err)
	}
	if len(log.lines) != 1 || log.lines[0] != "<6> generated 1 project (1 instance)" {
		t.Errorf("log = %q", log.lines)
	}
}

func TestRunUsage(t *testing.T) {
	if err := Run(context.Background(), nil, Env{Log: &recorder{}}); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("Run() = %v", err)
	}
}

// Runs into a directory that cannot be written fail loudly.
func TestRunUnwritable(t *testing.T) {
	etc := t.TempDir()
	writeProject(t, etc, "api", project("api", 3000))
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	env := Env{Getenv: func(string) string { return etc }, Log: &recorder{}, NumCPU: 1, Layout: systemScope()}
	if err := Run(context.Background(), []string{filepath.Join(blocker, "out")}, env); err == nil {
		t.Error("Run into a path below a file succeeded")
	}
}

func TestLogFormats(t *testing.T) {
	pid := fmt.Sprint(os.Getpid())
	if got := kmsgFormat(3, "skipped x"); got != "<11>bm2["+pid+"]: skipped x\n" {
		t.Errorf("kmsg record %q", got)
	}
	var entry struct {
		msg      string
		priority int
		vars     map[string]string
		deadline time.Duration
	}
	jl := &journalLogger{send: func(ctx context.Context, msg string, priority int, vars map[string]string) error {
		d, _ := ctx.Deadline()
		entry.msg, entry.priority, entry.vars, entry.deadline = msg, priority, vars, time.Until(d)
		return nil
	}}
	jl.Log(4, "m\nn")
	if entry.msg != "m n" || entry.priority != 4 || entry.vars["SYSLOG_IDENTIFIER"] != "bm2" || entry.vars["SYSLOG_FACILITY"] != "1" ||
		entry.vars["SYSLOG_PID"] != pid || entry.deadline <= 0 || entry.deadline > journalTimeout {
		t.Errorf("journal entry %+v", entry)
	}
	var fb strings.Builder
	jl = &journalLogger{send: func(context.Context, string, int, map[string]string) error { return errors.New("busy") }, fallback: &fb}
	jl.Log(3, "x")
	if fb.String() != "bm2-generator: x\n" {
		t.Errorf("an entry journald did not take went to stderr as %q", fb.String())
	}
	var b strings.Builder
	l := &lineLogger{w: &b, format: kmsgFormat}
	l.Log(3, "two\nlines")
	if strings.Count(b.String(), "\n") != 1 {
		t.Errorf("one message became %q", b.String())
	}
}

// A project whose files cannot be written is missing as a whole, its
// error names it, and every other project is still written completely.
func TestWriteScopesFailuresToTheProject(t *testing.T) {
	out := t.TempDir()
	res := Generate([]config.Source{
		{Path: "/etc/bm2/bad.toml", Data: []byte(project("bad", 3000))},
		{Path: "/etc/bm2/good.toml", Data: []byte(project("good", 4000))},
	}, testOptions)
	// Something that is not a file sits where bad's target goes.
	if err := os.MkdirAll(filepath.Join(out, "bm2-bad.target", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Write(out, res.Files)
	var we *WriteError
	if !errors.As(err, &we) || len(we.Failed) != 1 || we.Failed["bad"] == nil || !strings.Contains(err.Error(), "bad: ") {
		t.Fatalf("Write = %v", err)
	}
	for _, f := range res.Files {
		_, serr := os.Lstat(filepath.Join(out, f.Path))
		switch {
		case f.Project == "good" && serr != nil:
			t.Errorf("good's %s missing: %v", f.Path, serr)
		case f.Project == "bad" && serr == nil && f.Path != "bm2-bad.target":
			t.Errorf("bad's %s left behind", f.Path)
		}
	}
}

// A byte the drop-in template uses as a placeholder, in the project file's
// own path, does not corrupt the output: the drop-ins are rendered one by
// one instead, and come out as they would have.
func TestDropInTemplateFallback(t *testing.T) {
	odd := config.Source{Path: "/etc/bm2\x01x/odd.toml", Data: []byte(project("odd", 3000) + "instances = 2\n")}
	res := Generate([]config.Source{odd}, testOptions)
	for _, f := range res.Files {
		if strings.HasSuffix(f.Path, DropInName) && !strings.Contains(string(f.Data), "from /etc/bm2\x01x/odd.toml") {
			t.Fatalf("%s:\n%s", f.Path, f.Data)
		}
	}
	if f := res.Files[len(res.Files)-2]; !strings.Contains(string(f.Data), "BM2_APP_INSTANCE=1") || !strings.Contains(string(f.Data), "instance 1\n") {
		t.Fatalf("%s:\n%s", f.Path, f.Data)
	}
}

// Root's own user manager (user@0.service) runs user generators too, as
// root: root's projects are system projects, and nothing is generated.
func TestRunRootsUserManager(t *testing.T) {
	testutil.Root(t) // it is what root's user manager runs
	out := filepath.Join(t.TempDir(), "out")
	log := &recorder{}
	env := Env{Getenv: func(k string) string {
		if k == layout.ScopeEnv {
			return "user"
		}
		return ""
	}, Log: log, NumCPU: 1}
	if err := Run(context.Background(), []string{out}, env); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("root's user manager got units in %s", out)
	}
	if len(log.lines) != 1 || !strings.Contains(log.lines[0], "root's projects run in system scope") {
		t.Errorf("log %v", log.lines)
	}
}

// The user generator reads only what the user alone can change, and does
// not generate a project whose secrets it cannot read.
func TestRunUserScope(t *testing.T) {
	home := t.TempDir()
	l := layout.User(os.Geteuid(), "alice", home)
	proj := l.ConfigDir
	writeProject(t, proj, "web", project("web", 8080))
	writeProject(t, proj, "sec", project("sec", 8090))
	priv := filepath.Join(proj, "private")
	if err := os.MkdirAll(priv, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(priv, "sec.toml"), []byte("[env]\nTOKEN = \"t\"\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	log := &recorder{}
	env := Env{Getenv: func(string) string { return "" }, Log: log, NumCPU: 1, Layout: &l}
	err := Run(context.Background(), []string{out}, env)
	if os.Geteuid() != 0 {
		// Unreadable private part: skipped, not generated without it.
		if !errors.Is(err, ErrSkipped) || !strings.Contains(strings.Join(log.lines, "\n"), "cannot read its private part") {
			t.Errorf("Run = %v, log %v", err, log.lines)
		}
		if _, err := os.Stat(filepath.Join(out, "bm2-sec.target")); err == nil {
			t.Error("sec generated without its secrets")
		}
	}
	if _, err := os.Stat(filepath.Join(out, "default.target.wants", "bm2-web.target")); err != nil {
		t.Errorf("web not enabled for the user's default.target: %v (log %v)", err, log.lines)
	}
	// A projects directory others may write: nothing is read from it.
	if err := os.Chmod(proj, 0o777); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "out")
	log = &recorder{}
	env.Log = log
	if err := Run(context.Background(), []string{out2}, env); !errors.Is(err, ErrSkipped) {
		t.Errorf("Run with a world-writable %s = %v, want skipped", proj, err)
	}
	if _, err := os.Stat(filepath.Join(out2, "bm2-web.target")); err == nil {
		t.Errorf("generated from a directory others may write; log %v", log.lines)
	}
	if !strings.Contains(strings.Join(log.lines, "\n"), proj+" must be") {
		t.Errorf("log %v", log.lines)
	}
}

// The scheduled reload runs the bm2 installed with the generator:
// <prefix>/bin/bm2 for <prefix>/lib/systemd/{system,user}-generators/,
// DefaultCLI when there is none; Run hands it to the restart service.
func TestCLINextTo(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "opt", "bin", "bm2")
	for _, gens := range []string{"system-generators", "user-generators"} {
		exe := filepath.Join(root, "opt", "lib", "systemd", gens, "bm2-generator")
		if got := CLINextTo(exe); got != DefaultCLI {
			t.Fatalf("without %s: %s", bin, got)
		}
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := CLINextTo(filepath.Join(root, "opt", "lib", "systemd", "user-generators", "bm2-generator")); got != bin {
		t.Fatalf("CLINextTo = %s, want %s", got, bin)
	}

	etc, out := filepath.Join(root, "etc"), filepath.Join(root, "out")
	writeProject(t, etc, "api", project("api", 3000)+"restart_schedule = \"daily\"\n")
	env := Env{Getenv: func(k string) string {
		if k == "BM2_CONFIG_PATH" {
			return etc
		}
		return ""
	}, Log: &recorder{}, NumCPU: 2, Helper: DefaultHelper, CLI: bin, Layout: systemScope()}
	if err := Run(context.Background(), []string{out}, env); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "bm2-api-restart.service"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nExecStart=" + bin + " --system reload api\n"; !strings.Contains(string(data), want) {
		t.Fatalf("no %q in\n%s", want, data)
	}
}

// Run's output and messages do not depend on how many goroutines read,
// parse, render and write: at GOMAXPROCS 1 and 8, and run after run, the
// same files with the same bytes and modes, and the same log, whose
// errors come in the order of the files' names.
func TestRunSameAtAnyParallelism(t *testing.T) {
	etc := t.TempDir()
	var broken []string
	for i := range 160 {
		name := fmt.Sprintf("p%03d", i)
		body := project(name, 3000+10*i) + fmt.Sprintf("instances = %d\n", 1+i%7)
		switch i % 5 {
		case 1:
			body += "exec_mode = \"fork\"\n[env]\nK = \"v\"\n"
		case 2:
			body += fmt.Sprintf("restart_schedule = \"daily\"\nhealth_path = \"/\"\nhealth_port = %d\n", 20000+10*i)
		case 3:
			if i%3 == 0 {
				body += "wat = 1\n" // unknown: skipped
				broken = append(broken, name)
			}
		}
		writeProject(t, etc, name, body)
	}
	writeProject(t, etc, "zz", project("zz", 3000)) // p000's port: refused
	broken = append(broken, "zz")
	out := filepath.Join(t.TempDir(), "out") // EnvironmentFile= names it
	run := func(procs int) (tree map[string]string, log []string) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		rec := &recorder{}
		env := Env{Getenv: func(k string) string {
			if k == "BM2_CONFIG_PATH" {
				return etc
			}
			return ""
		}, Log: rec, NumCPU: 2, Helper: DefaultHelper, Layout: systemScope()}
		if err := Run(context.Background(), []string{out}, env); !errors.Is(err, ErrSkipped) {
			t.Fatalf("GOMAXPROCS %d: Run = %v, want ErrSkipped", procs, err)
		}
		tree = map[string]string{}
		filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(out, p)
			st, _ := os.Lstat(p)
			data, _ := os.ReadFile(p)
			if st.Mode()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(p)
				data = []byte("-> " + target)
			}
			tree[rel] = st.Mode().String() + "\n" + string(data)
			return nil
		})
		return tree, rec.lines
	}
	tree, log := run(1)
	if len(tree) < 160*5 {
		t.Fatalf("%d files and directories written", len(tree))
	}
	var skipped []string
	for _, line := range log {
		if rest, ok := strings.CutPrefix(line, "<3> skipped "); ok {
			skipped = append(skipped, rest[:strings.Index(rest, ":")])
		}
	}
	if strings.Join(skipped, " ") != strings.Join(broken, " ") {
		t.Errorf("skipped in the order %v, want %v", skipped, broken)
	}
	for _, procs := range []int{8, 1, 8} {
		again, alog := run(procs)
		if !maps.Equal(again, tree) {
			for p := range tree {
				if again[p] != tree[p] {
					t.Errorf("GOMAXPROCS %d: %s differs:\n%s\nwant\n%s", procs, p, again[p], tree[p])
					break
				}
			}
			t.Errorf("GOMAXPROCS %d: %d entries, want %d", procs, len(again), len(tree))
		}
		if !slices.Equal(alog, log) {
			t.Errorf("GOMAXPROCS %d: log\n%s\nwant\n%s", procs, strings.Join(alog, "\n"), strings.Join(log, "\n"))
		}
	}
}
