package convert

import (
	"flag"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/testutil"
)

var updateMan = flag.Bool("update", false, "rewrite the PM2 KEYS table of packaging/man/bm2-import.1")

const (
	manPage  = "../../../packaging/man/bm2-import.1"
	manBegin = `.\" BEGIN KEYS: made by go test ./internal/pm2/convert -run TestManTable -update; do not edit`
	manEnd   = `.\" END KEYS`
)

// TestManTable keeps bm2-import(1)'s table and the rules one list.
func TestManTable(t *testing.T) {
	if !testutil.ManSection(t, manPage, manBegin, manEnd, manTable(), *updateMan) {
		t.Errorf("the PM2 KEYS table of %s is not the rules'; run `go test ./internal/pm2/convert -run TestManTable -update`", manPage)
	}
}

func manTable() string {
	esc := strings.NewReplacer(`\`, `\e`, "-", `\-`)
	var b strings.Builder
	for _, k := range Keys() {
		b.WriteString(".TP\n.B " + esc.Replace(k.Key) + "\n")
		if len(k.Aliases) > 0 {
			b.WriteString("(also " + esc.Replace(strings.Join(k.Aliases, ", ")) + ")\n")
		}
		text := k.To
		if k.Mapped {
			text = "becomes " + text
		} else {
			text = "note: " + strings.TrimPrefix(text, "APP: ")
		}
		line := esc.Replace(text)
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
