package reason

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the failure-mode table of docs/troubleshooting.md from the table")

const (
	doc      = "../../docs/troubleshooting.md"
	docBegin = "<!-- BEGIN failure modes: made from package reason by `go test ./internal/reason -update`; do not edit -->"
	docEnd   = "<!-- END failure modes -->"
)

// docs/troubleshooting.md is the table.
func TestTroubleshootingIsTheTable(t *testing.T) {
	if !testutil.ManSection(t, doc, docBegin, docEnd, Markdown(), *update) {
		t.Errorf("the failure-mode table in %s is not what package reason makes; run `go test ./internal/reason -update`", doc)
	}
}

// Every mode is a reason bm2 records, once, and every reason bm2 records
// that is not a plain crash has a mode.
func TestEveryReasonHasAMode(t *testing.T) {
	plain := map[Reason]bool{Exited: true, Killed: true, CoreDumped: true,
		Timeout: true, OOM: true, Watchdog: true}
	known := map[Reason]bool{}
	for _, r := range All() {
		known[r] = true
		if _, ok := Lookup(r); !ok && !plain[r] {
			t.Errorf("reason %s has no failure mode", r)
		}
	}
	seen := map[Reason]bool{}
	for _, m := range modes {
		if !known[m.Reason] {
			t.Errorf("mode %s is not in All()", m.Reason)
		}
		if seen[m.Reason] {
			t.Errorf("mode %s twice", m.Reason)
		}
		seen[m.Reason] = true
		if m.Case == "" || m.Message == "" || m.Fix == "" || m.Man == "" {
			t.Errorf("mode %s lacks a case, message, fix or man page: %+v", m.Reason, m)
		}
	}
}

// Every filled message and fix has no placeholder left, and every fix
// says what to type.
func TestWordingIsComplete(t *testing.T) {
	left := regexp.MustCompile(`\{[a-z]+\}`)
	for _, m := range modes {
		for _, rt := range []string{"node", "bun", "node+preload", "bun+preload"} {
			f := m.Example
			f.Runtime, _, f.Preload = strings.Cut(rt, "+preload")
			e, ok := Explain(m.Reason, f)
			if !ok {
				t.Fatalf("%s: no explanation", m.Reason)
			}
			for _, s := range []string{e.Message, e.Fix} {
				if left.MatchString(s) {
					t.Errorf("%s (%s): placeholder left in %q", m.Reason, rt, s)
				}
			}
			if !strings.Contains(e.Fix, "`") {
				t.Errorf("%s (%s): the fix names nothing to type: %q", m.Reason, rt, e.Fix)
			}
		}
	}
}

// Under Bun, a port bound alone names both causes and both fixes: the
// kernel cannot tell Bun's node:http from a Bun.serve without reusePort.
func TestReuseportMissingWordedByRuntime(t *testing.T) {
	f := Facts{Project: "expbun", Instance: "expbun-1", Port: 3400}
	node, _ := Explain(ReuseportMissing, f)
	f.Runtime = "bun"
	bun, _ := Explain(ReuseportMissing, f)
	for _, want := range []string{"expbun-1 holds port 3400 alone", "node:http", "Bun.serve"} {
		if !strings.Contains(bun.Message, want) {
			t.Errorf("Bun message lacks %q: %s", want, bun.Message)
		}
	}
	for _, want := range []string{"Bun.serve({ port: Number(process.env.BM2_APP_PORT), reusePort: true })", `exec_mode = "fork"`, "`bm2 start expbun`"} {
		if !strings.Contains(bun.Fix, want) {
			t.Errorf("Bun fix lacks %q: %s", want, bun.Fix)
		}
	}
	if strings.Contains(node.Message, "Bun") || !strings.Contains(node.Fix, "server.listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true })") {
		t.Errorf("Node wording: %s / %s", node.Message, node.Fix)
	}
	// The fix that changes no code comes first, then the code change,
	// then fork mode; under Bun the preload is offered for Bun.serve.
	preload, code, fork := strings.Index(node.Fix, "`reuseport = \"preload\"`"), strings.Index(node.Fix, "server.listen("), strings.Index(node.Fix, `exec_mode = "fork"`)
	if preload < 0 || !(preload < code && code < fork) {
		t.Errorf("Node fix: want reuseport = \"preload\", then server.listen, then fork mode: %s", node.Fix)
	}
	if !strings.HasPrefix(bun.Fix, "with Bun.serve, set `reuseport = \"preload\"` in bm2.toml") || !strings.Contains(bun.Fix, "node:http cannot share a port under Bun, preload or not") {
		t.Errorf("Bun fix: %s", bun.Fix)
	}
	// A project that has the preload already is not told to set it.
	for _, rt := range []string{"node", "bun"} {
		pf := f
		pf.Runtime, pf.Preload = rt, true
		e, _ := Explain(ReuseportMissing, pf)
		if !strings.HasPrefix(e.Fix, "`reuseport = \"preload\"` is set") || strings.Contains(e.Fix, "set `reuseport") || !strings.Contains(e.Fix, `exec_mode = "fork"`) {
			t.Errorf("%s fix with the preload set: %s", rt, e.Fix)
		}
	}
	f.Again = "`bm2 serve`"
	if e, _ := Explain(ReuseportMissing, f); !strings.HasSuffix(e.Fix, "then `bm2 serve`") {
		t.Errorf("the fix does not end with the command to try again: %s", e.Fix)
	}
	if _, ok := Explain(Exited, f); ok {
		t.Error("a plain exit has a mode")
	}
}

// What comes from an app's process (its command name) cannot break the
// line it is printed on.
func TestCleanStripsControlCharacters(t *testing.T) {
	e, _ := Explain(PortInUse, Facts{Project: "api", Port: 80, Detail: "ev\x1b[2Jil\nfake (pid 1)"})
	if strings.ContainsAny(e.Message, "\x1b\n") || !strings.Contains(e.Message, `ev\x1b[2Jil\nfake (pid 1)`) {
		t.Errorf("message %q", e.Message)
	}
	if n := len(Clean(strings.Repeat("x", 1000))); n > 210 {
		t.Errorf("Clean kept %d bytes", n)
	}
}

// Every man page section a mode points to exists.
func TestManSectionsExist(t *testing.T) {
	pages := map[string]string{"bm2(1)": "../../packaging/man/bm2.1", "bm2.toml(5)": "../../packaging/man/bm2.toml.5"}
	for _, m := range modes {
		page, sec, ok := strings.Cut(m.Man, " ")
		file := pages[page]
		if !ok || file == "" {
			t.Errorf("%s: man reference %q", m.Reason, m.Man)
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "\n.SH "+sec+"\n") && !strings.Contains(string(data), "\n.SH \""+sec+"\"\n") {
			t.Errorf("%s: %s has no section %s", m.Reason, file, sec)
		}
	}
}

func TestCleanMessageKeepsAWholeMessage(t *testing.T) {
	long := strings.Repeat("word ", 100)
	if got := CleanMessage(long + "\n"); got != long+`\n` {
		t.Errorf("CleanMessage cut or kept a newline: %d bytes", len(got))
	}
}
