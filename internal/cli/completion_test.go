package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/complete"
	"github.com/bm2dev/bm2/internal/testutil"
)

// asBM2 makes this test binary run as bm2 itself (cmd/bm2's main), so that
// real shells can call it: the completion scripts run `bm2 __complete`.
const asBM2 = "BM2_CLI_TEST_RUN_AS_BM2"

func TestMain(m *testing.M) {
	if os.Getenv(asBM2) == "1" {
		os.Exit(Main(context.Background(), os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
	}
	os.Exit(m.Run())
}

// completionHost is a PATH with bm2 in it (this test binary) and a search
// path with three projects: api (3 instances, cluster), web (2, fork) and
// a broken one, whose name is still completed.
func completionHost(t *testing.T) (env []string, dir string) {
	t.Helper()
	dir = t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "bm2")); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "etc")
	if err := os.Mkdir(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"api.toml":    "name = \"api\"\nscript = \"a.js\"\ncwd = \"/srv/api\"\ninstances = 3\nport = 3000\n",
		"web.toml":    "name = \"web\"\nscript = \"w.js\"\ncwd = \"/srv/web\"\ninstances = 2\nport = 3100\nexec_mode = \"fork\"\n",
		"broken.toml": "name = \"broken\"\nport = \"x\"\n",
	} {
		if err := os.WriteFile(filepath.Join(conf, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Files for the commands that take one (check, serve, import).
	if err := os.WriteFile(filepath.Join(dir, "bm2.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "PATH=") && !strings.HasPrefix(e, "BM2_") && !strings.HasPrefix(e, "GORACE=") {
			env = append(env, e)
		}
	}
	// GORACE: a -race binary otherwise sleeps 1 s before it exits.
	env = append(env, asBM2+"=1", "PATH="+bin+":"+os.Getenv("PATH"), "BM2_CONFIG_PATH="+conf, "GORACE=atexit_sleep_ms=0")
	return env, dir
}

// completionCases are command lines (the last word is being completed)
// and the candidates every shell must offer for them.
var completionCases = []struct {
	words []string
	want  []string
}{
	{[]string{"re"}, []string{"reload", "restart"}},
	{[]string{"--system", "re"}, []string{"reload", "restart"}},
	{[]string{"-"}, []string{"--help", "--system", "--user", "--version"}},
	{[]string{"status", "--system", "w"}, []string{"web"}},
	{[]string{""}, complete.WithPrefix("", commandNames())},
	{[]string{"comp"}, []string{"completion"}},
	{[]string{"logs", "--"}, []string{"--follow", "--grep", "--help", "--json", "--lines", "--since", "--system", "--systemd", "--user"}},
	{[]string{"logs", "--grep", ""}, nil}, // a pattern: nothing to offer
	{[]string{"logs", "--grep", "x", "w"}, []string{"web", "web-0", "web-1"}},
	{[]string{"serve", "--t"}, []string{"--timeout", "--trust-file"}},
	{[]string{"status", ""}, []string{"api", "broken", "web"}},
	{[]string{"restart", "a"}, []string{"api", "api-0", "api-1", "api-2"}},
	{[]string{"logs", "web-"}, []string{"web-0", "web-1"}},
	{[]string{"stop", "api-1"}, []string{"api-1"}},
	{[]string{"logs", "-n", "50", "w"}, []string{"web", "web-0", "web-1"}},
	{[]string{"logs", "-n", ""}, nil}, // a count: nothing to offer
	{[]string{"start", "api", ""}, nil},
	{[]string{"list", "api", "w"}, []string{"web"}},
	{[]string{"top", "a"}, []string{"api"}},
	{[]string{"top", "api", "w"}, []string{"web"}},
	{[]string{"metrics", "--h"}, []string{"--help", "--http"}},
	{[]string{"metrics", "--http", "api", ""}, []string{"api", "broken", "web"}},
	{[]string{"m"}, []string{"metrics", "migrate"}},
	{[]string{"gateway", ""}, []string{"caddy", "httproute", "nginx"}},
	{[]string{"gateway", "nginx", "a"}, []string{"api"}},
	{[]string{"gateway", "httproute", "--gateway", "edge", "a"}, []string{"api"}},
	{[]string{"export", ""}, []string{"kube"}},
	{[]string{"export", "kube", "--image", "app:1", "a"}, []string{"api"}},
	{[]string{"export", "kube", "--o"}, []string{"--ordinal", "--out"}},
	{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
	{[]string{"help", "st"}, []string{"start", "startup", "status", "stop"}},
	{[]string{"ls", "a"}, []string{"api"}},
	{[]string{"sc"}, []string{"scale"}},
	{[]string{"scale", "w"}, []string{"web"}},
	{[]string{"scale", "api", ""}, []string{"max"}}, // N, +N and -N are typed
	{[]string{"scale", "--"}, []string{"--help", "--system", "--timeout", "--user"}},
	{[]string{"version", ""}, nil},
	{[]string{"nope", ""}, nil},
}

func TestCompleteCandidates(t *testing.T) {
	env, _ := completionHost(t)
	for _, c := range completionCases {
		cmd := exec.Command(lookPath(t, env), append([]string{completeCommand, "--"}, c.words...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bm2 __complete -- %q: %v", c.words, err)
		}
		var got []string
		for _, l := range lines(string(out)) {
			if l != complete.FilesDirective { // checked below
				got = append(got, l)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("bm2 __complete -- %q = %q, want %q", c.words, got, c.want)
		}
	}
	// Where a file fits, the shell is asked to list files too.
	for _, words := range [][]string{{"serve", ""}, {"check", "a"}, {"import", ""}, {"gateway", "-o", ""}, {"gateway", "caddy", ""}, {"export", "--out", ""}, {"export", "kube", ""}} {
		cmd := exec.Command(lookPath(t, env), append([]string{completeCommand, "--"}, words...)...)
		cmd.Env = env
		out, _ := cmd.Output()
		if !strings.Contains(string(out), complete.FilesDirective+"\n") {
			t.Errorf("bm2 __complete -- %q = %q: no %s", words, out, complete.FilesDirective)
		}
	}
}

func lookPath(t *testing.T, env []string) string {
	for _, e := range env {
		if p, ok := strings.CutPrefix(e, "PATH="); ok {
			return filepath.Join(strings.Split(p, ":")[0], "bm2")
		}
	}
	t.Fatal("no PATH")
	return ""
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// needShell returns the path of a shell, skipping the test when it is not
// installed (.ci/run installs bash, zsh and fish: there it must be).
func needShell(t *testing.T, name string) string {
	t.Helper()
	return testutil.Command(t, name, "sudo apt-get install "+name)
}

func shellQuote(words []string) string {
	var q []string
	for _, w := range words {
		q = append(q, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
	}
	return strings.Join(q, " ")
}

// Real bash completion: the script from `bm2 completion bash`, its _bm2
// run as bash runs it on TAB (COMP_WORDS, COMP_CWORD), COMPREPLY read back.
func TestBashCompletion(t *testing.T) {
	bash := needShell(t, "bash")
	env, dir := completionHost(t)
	for _, c := range completionCases {
		words := append([]string{"bm2"}, c.words...)
		script := `set -e
source <(bm2 completion bash)
complete -p bm2 | grep -q -- '-F _bm2'
COMP_WORDS=(` + shellQuote(words) + `)
COMP_CWORD=` + strconv.Itoa(len(words)-1) + `
_bm2
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "--norc", "-c", script)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash completion of %q: %v\n%s", words, err, out)
		}
		if got := lines(string(out)); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("bash completes %q to %q, want %q", words, got, c.want)
		}
	}
	// Files where a file fits, from bash's own compgen.
	cmd := exec.Command(bash, "--norc", "-c", `source <(bm2 completion bash); COMP_WORDS=(bm2 serve bm2); COMP_CWORD=2; _bm2; printf '%s\n' "${COMPREPLY[@]}"`)
	cmd.Env, cmd.Dir = env, dir
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "bm2.toml" {
		t.Errorf("bash completes `bm2 serve bm2` to %q (%v), want bm2.toml", out, err)
	}
}

// Real fish completion: `complete -C` asks fish itself what it would offer.
func TestFishCompletion(t *testing.T) {
	fish := needShell(t, "fish")
	env, dir := completionHost(t)
	for _, c := range completionCases {
		line := strings.Join(append([]string{"bm2"}, c.words...), " ")
		cmd := exec.Command(fish, "--no-config", "-c", `bm2 completion fish | source; complete -C `+shellQuote([]string{line}))
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fish completion of %q: %v\n%s", line, err, out)
		}
		var got []string
		for _, l := range lines(string(out)) {
			l, _, _ = strings.Cut(l, "\t") // a description may follow
			got = append(got, l)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("fish completes %q to %q, want %q", line, got, c.want)
		}
	}
	cmd := exec.Command(fish, "--no-config", "-c", `bm2 completion fish | source; complete -C 'bm2 serve bm2'`)
	cmd.Env, cmd.Dir = env, dir
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "bm2.toml" {
		t.Errorf("fish completes `bm2 serve bm2` to %q (%v), want bm2.toml", out, err)
	}
}

// zsh: the script loads with the real completion system (compinit), and
// its _bm2, run with the words and CURRENT zsh gives it, hands the
// candidates to compadd (recorded here: outside a completion widget zsh's
// own compadd cannot run).
func TestZshCompletion(t *testing.T) {
	zsh := needShell(t, "zsh")
	env, dir := completionHost(t)
	env = append(env, "HOME="+dir, "ZDOTDIR="+dir)
	for _, c := range completionCases {
		words := append([]string{"bm2"}, c.words...)
		script := `autoload -Uz compinit && compinit -u -d "$HOME/.zcompdump"
source <(bm2 completion zsh)
[[ $_comps[bm2] == _bm2 ]] || { echo "_bm2 not registered for bm2: $_comps[bm2]"; exit 1; }
compadd() { while [[ $# -gt 0 && $1 != -- ]]; do shift; done; shift; printf '%s\n' "$@"; }
_files() { print -- FILES; }
words=(` + shellQuote(words) + `)
CURRENT=` + strconv.Itoa(len(words)) + `
_bm2`
		cmd := exec.Command(zsh, "-f", "-c", script)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zsh completion of %q: %v\n%s", words, err, out)
		}
		var got []string
		for _, l := range lines(string(out)) {
			if l != "FILES" { // _files: checked below
				got = append(got, l)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("zsh completes %q to %q, want %q", words, got, c.want)
		}
	}
	cmd := exec.Command(zsh, "-f", "-c", `autoload -Uz compinit && compinit -u -d "$HOME/.zcompdump"
source <(bm2 completion zsh)
compadd() { :; }
_files() { print -- FILES; }
words=(bm2 serve ''); CURRENT=3; _bm2`)
	cmd.Env, cmd.Dir = env, dir
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "FILES" {
		t.Errorf("zsh completes `bm2 serve ` to %q (%v), want _files", out, err)
	}
}

// The installed files are what `bm2 completion` prints (the Makefile
// installs internal/cli/completion/ as it is), each registers its function for bm2,
// and an unknown shell is a usage error naming the known ones.
func TestCompletionScripts(t *testing.T) {
	te := newTestEnv(t)
	for _, s := range []struct{ shell, file, marks string }{
		{"bash", "completion/bm2.bash", "complete -F _bm2 bm2"},
		{"zsh", "completion/_bm2", "#compdef bm2"},
		{"fish", "completion/bm2.fish", "complete -c bm2 "},
	} {
		te.mustRun(ExitOK, "completion", s.shell)
		data, err := os.ReadFile(s.file)
		if err != nil {
			t.Fatal(err)
		}
		if te.stdout.String() != string(data) || !strings.Contains(string(data), s.marks) || !strings.Contains(string(data), completeCommand) {
			t.Errorf("bm2 completion %s is not %s, or lacks %q", s.shell, s.file, s.marks)
		}
	}
	te.mustRun(ExitUsage, "completion", "tcsh")
	if e := te.stderr.String(); !strings.Contains(e, `"tcsh"`) || !strings.Contains(e, "bash, zsh and fish") {
		t.Errorf("bm2 completion tcsh: %s", e)
	}
	// The hidden helper is in neither --help nor the man page.
	te.mustRun(ExitOK, "--help")
	if strings.Contains(te.stdout.String(), completeCommand) {
		t.Errorf("--help lists %s", completeCommand)
	}
}
