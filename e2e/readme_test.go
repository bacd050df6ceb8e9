package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/sandbox"
)

// The README's first session is run as it is shown. The convention:
//
//   - a fenced block opened with ```console in README.md is a session;
//   - in it, a line that starts with "$ " is a command, and the lines after
//     it, up to the next command or the end of the block, are its output
//     (stdout and stderr as the terminal shows them; blank lines at its end
//     only separate it from the next command);
//   - the commands of every session block run in order, in one e2e bed, as
//     root: a leading `sudo ` is dropped (also after `&&`, `||`, `;`, `|`);
//     the first runs in the root of the source tree (as in a checkout), each
//     later one where the one before left the shell (`cd` carries over);
//   - each must exit 0, and its real output, normalised, must be its shown
//     output, normalised (normaliseSession: what legitimately changes from
//     run to run is replaced by a placeholder, nothing else).
//
// `go test ./e2e -run '^TestReadmeSession$' -update` (as root) rewrites
// the shown outputs that drifted with the real ones.

var updateReadme = flag.Bool("update", false, "rewrite the drifted outputs of README.md's console session with the real ones")

// sessionStep is one command of a session block and the output shown for it.
type sessionStep struct {
	line     int    // the command's line in the file, from 1
	cmd      string // the command, without its "$ "
	want     string // the output shown, without trailing blank lines
	from, to int    // the output's lines in the file: [from, to), from 0
}

// parseSession reads the steps of every ```console block of a Markdown text.
func parseSession(md string) ([]sessionStep, error) {
	var steps []sessionStep
	lines := strings.Split(md, "\n")
	in := false
	var cur *sessionStep
	var out []string
	end := func() {
		if cur == nil {
			return
		}
		for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
			out = out[:len(out)-1]
		}
		cur.want = strings.Join(out, "\n")
		cur.to = cur.from + len(out)
		steps = append(steps, *cur)
		cur, out = nil, nil
	}
	for i, l := range lines {
		fence := strings.HasPrefix(strings.TrimSpace(l), "```")
		switch {
		case !in && fence:
			in = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "```")) == "console"
		case in && fence:
			end()
			in = false
		case !in:
		case strings.HasPrefix(l, "$ "):
			end()
			cur = &sessionStep{line: i + 1, cmd: strings.TrimPrefix(l, "$ "), from: i + 1}
			if strings.HasSuffix(cur.cmd, `\`) {
				return nil, fmt.Errorf("line %d: a command is one line", i+1)
			}
		case cur == nil:
			if strings.TrimSpace(l) != "" {
				return nil, fmt.Errorf("line %d: output before any command of its block: %q", i+1, l)
			}
		default:
			out = append(out, l)
		}
	}
	if in {
		return nil, errors.New("a ```console block is not closed")
	}
	return steps, nil
}

// sudoWord is a `sudo ` that starts a command of a shell line.
var sudoWord = regexp.MustCompile(`(^|&&|\|\||[;|])(\s*)sudo\s+`)

// asRoot is a command as root runs it: without sudo.
func asRoot(cmd string) string {
	return sudoWord.ReplaceAllString(cmd, "$1$2")
}

// varyingColumns are the columns of a table (bm2 list's) whose cells
// change from run to run.
var varyingColumns = map[string]bool{"PID": true, "UPTIME": true, "MEM": true, "CPU": true}

// tableHeader is a table's header line: upper-case words apart.
var tableHeader = regexp.MustCompile(`^[A-Z]+(  +[A-Z]+)+$`)

// varying are what changes from run to run, in the order applied, and
// their placeholders.
var varying = []struct {
	re   *regexp.Regexp
	with string
}{
	// 2026-11-30 05:14:10
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?( UTC)?`), "<TIME>"},
	// journal: Nov 30 05:14:10
	{regexp.MustCompile(`\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-9]\d \d{2}:\d{2}:\d{2}\b`), "<TIME>"},
	// (pid 285), Main PID: 285
	{regexp.MustCompile(`(?i)\b(pid:?) \d+`), "$1 <PID>"},
	// journal: bm2[292]:
	{regexp.MustCompile(`\[\d+\]:`), "[<PID>]:"},
	// (0.2s), in 1.1s, 3s ago
	{regexp.MustCompile(`\b\d+(\.\d+)?(µs|us|ms|s|min|m|h|d)\b`), "<DUR>"},
	// 2.6M
	{regexp.MustCompile(`\b\d+(\.\d+)?[KMGT](i?B)?\b`), "<MEM>"},
	// 0.4%
	{regexp.MustCompile(`\b\d+(\.\d+)?%`), "<CPU>"},
	// invocation ids
	{regexp.MustCompile(`\b[0-9a-f]{32}\b`), "<ID>"},
}

// unordered are lines about one instance each that instances write or
// reach in whatever order they run: a run of such lines is compared in
// sorted order (serve's progress, the instances' log lines).
var unordered = []*regexp.Regexp{
	regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*-\d+ (online|confirmed) `),
	regexp.MustCompile(`^<TIME> [a-z0-9][a-z0-9_-]*-\d+ \| `),
}

// normaliseSession is an output with what legitimately varies replaced:
// the varying columns of a table, then the varying patterns, then runs
// of spaces (column widths follow the values), then the order of a run of
// unordered lines.
func normaliseSession(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var header []string
	for i, l := range lines {
		f := strings.Fields(l)
		switch {
		case tableHeader.MatchString(strings.TrimSpace(l)):
			header = f
		case header != nil && len(f) == len(header):
			for j, h := range header {
				if varyingColumns[h] {
					f[j] = "<" + h + ">"
				}
			}
			lines[i] = strings.Join(f, " ")
		default:
			header = nil
		}
	}
	for i, l := range lines {
		for _, v := range varying {
			l = v.re.ReplaceAllString(l, v.with)
		}
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	kind := func(l string) int {
		for k, re := range unordered {
			if re.MatchString(l) {
				return k
			}
		}
		return -1
	}
	for i := 0; i < len(lines); {
		k, j := kind(lines[i]), i+1
		for k >= 0 && j < len(lines) && kind(lines[j]) == k {
			j++
		}
		sort.Strings(lines[i:j])
		i = j
	}
	return lines
}

// lineDiff is a readable diff of two texts' lines ("-" shown, "+" real).
func lineDiff(want, got []string) string {
	// The longest common subsequence, by dynamic programming: the
	// outputs are a few lines long.
	n, m := len(want), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			fmt.Fprintf(&b, "  %s\n", want[i])
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&b, "- %s\n", want[i])
			i++
		default:
			fmt.Fprintf(&b, "+ %s\n", got[j])
			j++
		}
	}
	return b.String()
}

// readmeSteps reads README.md's session.
func readmeSteps(t *testing.T) (path string, md string, steps []sessionStep) {
	t.Helper()
	path = filepath.Join(repoRoot(t), "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	steps, err = parseSession(string(data))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	return path, string(data), steps
}

// The README's session is what a newcomer types first: serve the example,
// list it, read its logs, reload it. Its parse is checked without a bed.
func TestReadmeSessionParses(t *testing.T) {
	_, _, steps := readmeSteps(t)
	var cmds []string
	for _, s := range steps {
		cmds = append(cmds, asRoot(s.cmd))
		if s.want == "" && !strings.HasPrefix(asRoot(s.cmd), "cp ") {
			t.Errorf("README.md:%d: %s shows no output", s.line, s.cmd)
		}
	}
	for _, want := range []string{"cp -r examples/hello /srv/hello", "cd /srv/hello && bm2 serve", "bm2 list"} {
		found := false
		for _, c := range cmds {
			found = found || c == want
		}
		if !found {
			t.Errorf("README.md's session lacks `%s`: it has %q", want, cmds)
		}
	}
}

func TestSessionNormaliser(t *testing.T) {
	for _, c := range []struct{ cmd, root string }{
		{"sudo bm2 serve", "bm2 serve"},
		{"cd /srv/hello && sudo bm2 serve", "cd /srv/hello && bm2 serve"},
		{"bm2 list | sudo tee x", "bm2 list | tee x"},
		{"bm2 logs pseudo", "bm2 logs pseudo"},
	} {
		if got := asRoot(c.cmd); got != c.root {
			t.Errorf("asRoot(%q) = %q, want %q", c.cmd, got, c.root)
		}
	}
	shown := `hello-0 online (pid 285)
hello-1 online (pid 286)
hello-0 confirmed (reusePort)
hello-1 confirmed (reusePort)
PROJECT  ID  MODE     STATE   PID  UPTIME  MEM   CPU
hello    0   cluster  online  285  1s      2.6M  -
2026-11-30 05:14:10 hello-1 | instance 1 listening on port 3000
2026-11-30 05:14:10 hello-0 | instance 0 listening on port 3000
hello-0 restarting… online, listening, confirmed (0.2s)
hello reloaded: 4 instances in 1.1s, online and confirmed`
	ran := `hello-1 online (pid 1436)
hello-0 online (pid 1400)
hello-1 confirmed (reusePort)
hello-0 confirmed (reusePort)
PROJECT  ID  MODE     STATE   PID   UPTIME  MEM    CPU
hello    0   cluster  online  1400  2m      12.5M  0.3%
2026-12-07 19:56:40 hello-0 | instance 0 listening on port 3000
2026-12-07 19:56:41 hello-1 | instance 1 listening on port 3000
hello-0 restarting… online, listening, confirmed (1.4s)
hello reloaded: 4 instances in 6.7s, online and confirmed`
	if w, g := normaliseSession(shown), normaliseSession(ran); strings.Join(w, "\n") != strings.Join(g, "\n") {
		t.Errorf("normalised outputs differ:\n%s", lineDiff(w, g))
	}
	// What does not vary is compared.
	for _, drift := range []string{
		strings.Replace(ran, "port 3000", "port 3001", 1),
		strings.Replace(ran, "online  1400", "errored  1400", 1),
		strings.Replace(ran, "(reusePort)", "(preload)", 1),
		strings.Replace(ran, "4 instances", "3 instances", 1),
	} {
		if w, g := normaliseSession(shown), normaliseSession(drift); strings.Join(w, "\n") == strings.Join(g, "\n") {
			t.Errorf("a drift went unseen:\n%s", drift)
		}
	}
	if d := lineDiff([]string{"a", "b", "c"}, []string{"a", "x", "c"}); d != "  a\n- b\n+ x\n  c\n" {
		t.Errorf("lineDiff:\n%s", d)
	}
}

// TestReadmeSession runs README.md's session in a bed and compares every
// output with the one shown.
func TestReadmeSession(t *testing.T) {
	t.Parallel()
	path, md, steps := readmeSteps(t)
	b := newBed(t)
	const cwdFile = "/run/readme-session.cwd"
	b.sh(fmt.Sprintf(`printf %%s %q >%s`, b.repo, cwdFile))
	ran := make([]string, len(steps))
	drifted := make([]bool, len(steps))
	for i, s := range steps {
		script := fmt.Sprintf("cd \"$(cat %s)\" || exit 125\n%s\nrc=$?\npwd >%s\nexit $rc", cwdFile, asRoot(s.cmd), cwdFile)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		out, err := b.Sh(ctx, script)
		cancel()
		if err != nil {
			var ee *sandbox.ExecError
			code := -1
			if errors.As(err, &ee) {
				code = ee.ExitCode
			}
			t.Fatalf("README.md:%d: `%s` exited %d (%v):\n%s", s.line, s.cmd, code, err, out)
		}
		ran[i] = strings.TrimRight(out, "\n")
		want, got := normaliseSession(s.want), normaliseSession(ran[i])
		if s.want == "" && ran[i] == "" {
			continue
		}
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			drifted[i] = true
			t.Errorf("README.md:%d: the output of `%s` drifted (normalised; - shown, + real):\n%s\nreal output (-update puts it in README.md):\n%s",
				s.line, s.cmd, lineDiff(want, got), ran[i])
		}
	}
	if *updateReadme && t.Failed() {
		lines := strings.Split(md, "\n")
		for i := len(steps) - 1; i >= 0; i-- {
			if !drifted[i] {
				continue
			}
			var with []string
			if ran[i] != "" {
				for _, l := range strings.Split(ran[i], "\n") {
					with = append(with, strings.TrimRight(l, " "))
				}
			}
			lines = append(lines[:steps[i].from], append(with, lines[steps[i].to:]...)...)
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the drifted outputs of %s", path)
	}
}
