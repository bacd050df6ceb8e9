package cli

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/journal"
)

//go:embed help.txt
var helpText string

// helpEntry is one command's section of help.txt.
type helpEntry struct {
	usage, short string
	examples     []string
	long         string
}

// helps is help.txt, parsed once, when a command's help is first asked
// for (a usage error, bm2 help, completion), not at every start of bm2:
// the one place the commands' help text lives (bm2(1)'s COMMANDS
// section is made from it too).
var helps = sync.OnceValue(func() map[string]helpEntry { return parseHelp(helpText) })

func parseHelp(text string) map[string]helpEntry {
	out := map[string]helpEntry{}
	var name string
	var cur helpEntry
	var long []string
	inBody := false
	kinds := sync.OnceValue(kindList)
	flush := func() {
		if name == "" {
			return
		}
		cur.long = strings.TrimSpace(strings.Join(long, "\n"))
		out[name] = cur
	}
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "== "); ok {
			flush()
			name, cur, long, inBody = strings.TrimSpace(rest), helpEntry{}, nil, false
			continue
		}
		if name == "" || (!inBody && strings.HasPrefix(line, "#")) {
			continue
		}
		if !inBody {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			switch k {
			case "usage":
				cur.usage = v
				continue
			case "short":
				cur.short = v
				continue
			case "example":
				cur.examples = append(cur.examples, v)
				continue
			case "":
				inBody = true
				continue
			}
			panic(fmt.Sprintf("help.txt: section %s: unknown field %q", name, k))
		}
		if strings.Contains(line, "{kinds}") {
			line = strings.ReplaceAll(line, "{kinds}", kinds())
		}
		long = append(long, line)
	}
	flush()
	return out
}

// kindList names every event kind bm2 emits, as a sentence.
func kindList() string {
	var ks []string
	for _, k := range journal.Kinds() {
		ks = append(ks, string(k))
	}
	return wording.JoinWords(ks)
}

// help returns a command's section; a command without one is a bug.
func help(name string) helpEntry {
	h, ok := helps()[name]
	if !ok {
		panic("help.txt has no section for " + name)
	}
	return h
}
