package journal

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// catalogFile is the source of /usr/lib/systemd/catalog/bm2.catalog.
const catalogFile = "../packaging/catalog/bm2.catalog"

type catalogEntry struct {
	id      string
	line    int
	headers map[string]string
	body    string
}

// readCatalog parses a catalog in systemd's format (systemd.io/CATALOG):
// "-- ID" opens an entry, header lines up to the first blank line, then
// the body; "#" lines outside a body are comments.
func readCatalog(t *testing.T, path string) []catalogEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []catalogEntry
	var cur *catalogEntry
	inBody := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "-- "); ok {
			out = append(out, catalogEntry{id: strings.TrimSpace(id), line: n, headers: map[string]string{}})
			cur, inBody = &out[len(out)-1], false
			continue
		}
		switch {
		case cur == nil:
			if line != "" && !strings.HasPrefix(line, "#") {
				t.Errorf("%s:%d: text outside an entry: %q", path, n, line)
			}
		case inBody:
			cur.body += line + "\n"
		case line == "":
			inBody = true
		default:
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				t.Errorf("%s:%d: header line %q is not \"Key: value\"", path, n, line)
				continue
			}
			if _, dup := cur.headers[k]; dup {
				t.Errorf("%s:%d: %s twice in entry %s", path, n, k, cur.id)
			}
			cur.headers[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every MESSAGE_ID bm2 emits has exactly one entry, every entry is one
// bm2 emits, and each says what happened and where to read more.
func TestCatalogCoversEveryKind(t *testing.T) {
	entries := readCatalog(t, catalogFile)
	byID := map[string]Kind{}
	for _, k := range Kinds() {
		byID[k.MessageID()] = k
	}
	seen := map[string]int{}
	placeholder := regexp.MustCompile(`@([A-Za-z0-9_]+)@`)
	for _, e := range entries {
		where := catalogFile + ":" + strconv.Itoa(e.line)
		seen[e.id]++
		k, known := byID[e.id]
		if !known {
			t.Errorf("%s: entry %s is no MESSAGE_ID of journal/event.go's kinds", where, e.id)
			continue
		}
		if seen[e.id] > 1 {
			t.Errorf("%s: a second entry for %s (%s)", where, k, e.id)
		}
		if s := e.headers["Subject"]; s == "" || strings.HasPrefix(s, "bm2") {
			t.Errorf("%s: %s: Subject %q (journalctl shows Defined-By before it)", where, k, s)
		}
		if e.headers["Defined-By"] != "bm2" {
			t.Errorf("%s: %s: Defined-By %q, want bm2", where, k, e.headers["Defined-By"])
		}
		if e.headers["Support"] == "" {
			t.Errorf("%s: %s: no Support", where, k)
		}
		docs := strings.Fields(e.headers["Documentation"])
		if len(docs) == 0 {
			t.Errorf("%s: %s: no Documentation", where, k)
		}
		for _, d := range docs {
			m := regexp.MustCompile(`^man:([a-z0-9.-]+)\(([1-8])\)$`).FindStringSubmatch(d)
			if m == nil {
				t.Errorf("%s: %s: Documentation %q is not man:page(N)", where, k, d)
				continue
			}
			if _, err := os.Stat(filepath.Join("../packaging/man", m[1]+"."+m[2])); err != nil {
				t.Errorf("%s: %s: Documentation %s: bm2 ships no such page", where, k, d)
			}
		}
		body := strings.TrimSpace(e.body)
		if body == "" {
			t.Errorf("%s: %s: empty body", where, k)
		}
		// What to do, and where to read more.
		if !strings.Contains(body, "bm2") || !regexp.MustCompile(`\(\d\)`).MatchString(body) {
			t.Errorf("%s: %s: the body names no command or man page:\n%s", where, k, body)
		}
		// systemd substitutes @NAME@ only for names of A-Z and "_"
		// (replace_var): one with a digit, as every BM2_* field has,
		// would be printed as it is.
		for _, m := range placeholder.FindAllStringSubmatch(e.headers["Subject"]+"\n"+e.body, -1) {
			if strings.ContainsAny(m[1], "0123456789") {
				t.Errorf("%s: %s: @%s@: journalctl cannot substitute a field whose name has a digit; let the event's message name it", where, k, m[1])
			}
		}
	}
	for _, k := range Kinds() {
		if seen[k.MessageID()] == 0 {
			t.Errorf("%s: no entry for %s (MESSAGE_ID %s): add one", catalogFile, k, k.MessageID())
		}
	}
}
