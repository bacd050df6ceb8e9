package cli

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/journal"
	"github.com/spf13/pflag"
)

var updateMan = flag.Bool("update", false, "rewrite the COMMANDS section of packaging/man/bm2.1 from help.txt")

const (
	manPage     = "../../packaging/man/bm2.1"
	manBegin    = `.\" BEGIN COMMANDS: made from internal/cli/help.txt by go test ./internal/cli -run TestManPage -update; do not edit`
	manEnd      = `.\" END COMMANDS`
	manFlagsTag = "Flags:"
)

// TestManPage keeps bm2(1) and --help one text: the COMMANDS section of
// the man page is what help.txt and the commands' flags make of it.
func TestManPage(t *testing.T) {
	if !testutil.ManSection(t, manPage, manBegin, manEnd, manCommands(), *updateMan) {
		t.Errorf("the COMMANDS section of %s is not what internal/cli/help.txt makes; run `go test ./internal/cli -run TestManPage -update`", manPage)
	}
}

// Every event kind the code emits is in --help and the man page, and no
// other: the docs once listed a kind that no longer existed.
func TestDocsListTheEventKinds(t *testing.T) {
	var kinds []string
	for _, k := range journal.Kinds() {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	// Anything that reads like an event kind and is neither a reason nor
	// a key of the project file is claimed to be one.
	kindRE := regexp.MustCompile(`\b(?:reuseport|instance|runtime|project|notification|state|memory|steering)_[a-z_]+\b`)
	other := map[string]bool{"runtime_path": true, "runtime_args": true, "memory_max": true, "memory_high": true, "memory_check_interval_ms": true}
	for _, r := range reason.All() {
		other[string(r)] = !isKind(string(r))
	}
	found := func(text string) []string {
		seen := map[string]bool{}
		for _, m := range kindRE.FindAllString(text, -1) {
			if !other[m] {
				seen[m] = true
			}
		}
		var out []string
		for k := range seen {
			if !isKind(k) {
				t.Errorf("documented event %q is not emitted by the code", k)
			}
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	if got := found(help("events").long); strings.Join(got, " ") != strings.Join(kinds, " ") {
		t.Errorf("bm2 events --help lists %v, want %v", got, kinds)
	}
	data, err := os.ReadFile(manPage)
	if err != nil {
		t.Fatal(err)
	}
	sec := string(data)
	sec = sec[strings.Index(sec, ".SH EVENTS"):]
	sec = sec[:strings.Index(sec[1:], ".SH ")+1]
	if got := found(sec); strings.Join(got, " ") != strings.Join(kinds, " ") {
		t.Errorf("bm2(1) EVENTS lists %v, want %v", got, kinds)
	}
}

func isKind(s string) bool {
	for _, k := range journal.Kinds() {
		if string(k) == s {
			return true
		}
	}
	return false
}

// manCommands renders every command's help as man(7) text.
func manCommands() string {
	var b strings.Builder
	for _, c := range commands() {
		h := help(c.name)
		fs := newFlagSet(c)
		c.setup(fs)
		name := c.name
		if len(c.aliases) > 0 {
			name += " (" + strings.Join(c.aliases, ", ") + ")"
		}
		b.WriteString(".TP\n")
		if h.usage != "" {
			fmt.Fprintf(&b, ".BR %s \" %s\"\n", roffArg(name), roffText(h.usage))
		} else {
			fmt.Fprintf(&b, ".B %s\n", roffArg(name))
		}
		for k, para := range paragraphs(h.long) {
			if k > 0 {
				b.WriteString(".IP\n")
			}
			if strings.HasPrefix(para[0], "  ") {
				b.WriteString(".EX\n")
				for _, l := range para {
					b.WriteString(roffLine(strings.TrimPrefix(l, "  ")) + "\n")
				}
				b.WriteString(".EE\n")
				continue
			}
			for _, l := range para {
				b.WriteString(roffLine(l) + "\n")
			}
		}
		var flags []*pflag.Flag
		fs.VisitAll(func(f *pflag.Flag) { flags = append(flags, f) })
		if len(flags) > 0 {
			b.WriteString(".IP\n" + manFlagsTag + "\n.RS\n")
			for _, f := range flags {
				typ, usage := pflag.UnquoteUsage(f)
				b.WriteString(".TP\n")
				head := "\\-\\-" + roffText(f.Name)
				if f.Shorthand != "" {
					head = "\\-" + f.Shorthand + ", " + head
				}
				if typ != "" && typ != "bool" {
					head += " \\fI" + roffText(typ) + "\\fR"
				}
				fmt.Fprintf(&b, ".B %s\n%s\n", head, roffLine(usage))
			}
			b.WriteString(".RE\n")
		}
		if len(h.examples) > 0 {
			b.WriteString(".IP\n.EX\n")
			for _, e := range h.examples {
				b.WriteString(roffLine("$ "+e) + "\n")
			}
			b.WriteString(".EE\n")
		}
	}
	return b.String()
}

// paragraphs splits text at blank lines.
func paragraphs(text string) [][]string {
	var out [][]string
	var cur []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			if cur != nil {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}

// roffText escapes text for man(7): backslashes and hyphens.
func roffText(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}

// roffLine is roffText for a whole input line, which must not start a
// request.
func roffLine(s string) string {
	s = roffText(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

func roffArg(s string) string {
	if strings.ContainsAny(s, " ") {
		return `"` + roffText(s) + `"`
	}
	return roffText(s)
}
