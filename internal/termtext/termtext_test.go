package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, one, lines string }{
		{"plain text, tab\tkept: ünïcödé ✓ 日本", "plain text, tab\tkept: ünïcödé ✓ 日本", "plain text, tab\tkept: ünïcödé ✓ 日本"},
		{"clear \x1b[2J screen", `clear \x1b[2J screen`, `clear \x1b[2J screen`},
		{"\x1b]52;c;cHduZWQ=\x07", `\x1b]52;c;cHduZWQ=\x07`, `\x1b]52;c;cHduZWQ=\x07`},
		{"ok\rFAKE", `ok\rFAKE`, `ok\rFAKE`},
		{"two\nlines\n", `two\nlines\n`, "two\nlines\n"},
		{"nul\x00 bel\x07 bs\x08 del\x7f", `nul\x00 bel\x07 bs\x08 del\x7f`, `nul\x00 bel\x07 bs\x08 del\x7f`},
		{"c1 csi \u009b31m and \u0085", `c1 csi \u009b31m and \u0085`, `c1 csi \u009b31m and \u0085`},
		{"raw c1 byte \x9b31m", `raw c1 byte \x9b31m`, `raw c1 byte \x9b31m`},
		{"bad utf-8 \xff\xfe and cut \xe2\x82", `bad utf-8 \xff\xfe and cut \xe2\x82`, `bad utf-8 \xff\xfe and cut \xe2\x82`},
		{"bidi \u202egnp.exe\u202c \u2066x\u2069 sep\u2028", `bidi \u202egnp.exe\u202c \u2066x\u2069 sep\u2028`, `bidi \u202egnp.exe\u202c \u2066x\u2069 sep\u2028`},
		{`a literal \x1b stays`, `a literal \x1b stays`, `a literal \x1b stays`},
		{"", "", ""},
	} {
		if got := Escape(c.in); got != c.one {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.one)
		}
		if got := EscapeLines(c.in); got != c.lines {
			t.Errorf("EscapeLines(%q) = %q, want %q", c.in, got, c.lines)
		}
		if Safe(c.in) != (c.in == c.one) {
			t.Errorf("Safe(%q) = %v", c.in, Safe(c.in))
		}
	}
	if got := EscapeField("a\tb\x1b"); got != `a\tb\x1b` {
		t.Errorf("EscapeField = %q", got)
	}
	if got := EscapeCut(strings.Repeat("\x1b", 100), 10); got != `\x1b\x1b\x1b` {
		t.Errorf("EscapeCut cut inside an escape: %q", got)
	}
	if got := EscapeCut("ab日本", 3); got != "ab日" {
		t.Errorf("EscapeCut = %q", got)
	}
}

// A terminal acts on nothing Escape lets through.
func checkInert(t *testing.T, out string, keepNewline bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("not UTF-8: %q", out)
	}
	for _, r := range out {
		if special(r, utf8.RuneLen(r), keepNewline) {
			t.Fatalf("%q lets %U through", out, r)
		}
	}
}

// The Writer escapes what is written through it, a character split
// across writes included, and holds nothing back after Flush.
func TestWriter(t *testing.T) {
	in := "a\x1b[2Jb\r日本\u009bc\xff\n"
	for split := 0; split <= len(in); split++ {
		var out bytes.Buffer
		w := NewWriter(&out)
		w.Write([]byte(in[:split]))
		w.Write([]byte(in[split:]))
		w.Flush()
		if want := EscapeLines(in); out.String() != want {
			t.Errorf("split at %d: %q, want %q", split, out.String(), want)
		}
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Write([]byte("cut \xe6\x97"))
	if out.String() != "cut " {
		t.Errorf("wrote %q before the character was complete", out.String())
	}
	w.Flush()
	if out.String() != `cut \xe6\x97` {
		t.Errorf("Flush wrote %q", out.String())
	}
}

// --json keeps the bytes: a string when UTF-8 (control characters
// escaped by JSON, no HTML escaping), the bytes otherwise.
func TestJSON(t *testing.T) {
	for in, want := range map[string]string{
		"ok <b> & \x1b[2J\r\n": `"ok <b> & \u001b[2J\r\n"`,
		"\xffA":                `[255,65]`,
		"":                     `""`,
		// What JSON's encoder leaves raw: DEL, C1, bidi overrides.
		"del\x7f c1\u009b bidi\u202e é\u2028": `"del\u007f c1\u009b bidi\u202e é\u2028"`,
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as bm2 events --json does
		err := enc.Encode(JSON(in))
		if got := strings.TrimSuffix(buf.String(), "\n"); err != nil || got != want {
			t.Errorf("JSON(%q) = %s, %v; want %s", in, got, err, want)
		}
		// Writer, around bm2's stdout, lets it through as it is.
		var out bytes.Buffer
		w := NewWriter(&out)
		w.Write(buf.Bytes())
		w.Flush()
		var back JSON
		if out.String() != buf.String() || !json.Valid(out.Bytes()) {
			t.Errorf("JSON(%q) through Writer: %s", in, out.String())
		} else if utf8.ValidString(in) && (json.Unmarshal(out.Bytes(), (*string)(&back)) != nil || string(back) != in) {
			t.Errorf("JSON(%q) reads back as %q", in, back)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J\x1b]52;c;x\x07\r\n", "\u009b\xff\xe2\x82", "\u202e\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		one, lines := Escape(s), EscapeLines(s)
		checkInert(t, one, false)
		checkInert(t, lines, true)
		if strings.Contains(one, "\n") {
			t.Fatalf("Escape(%q) = %q keeps a newline", s, one)
		}
		// Nothing is lost: the lines are the escaped lines, and text
		// that needs no escape is kept as it is.
		if strings.Join(strings.Split(lines, "\n"), `\n`) != one {
			t.Fatalf("EscapeLines(%q) = %q is not Escape's %q with newlines", s, lines, one)
		}
		if Safe(s) != (one == s) {
			t.Fatalf("Safe(%q) = %v but Escape gives %q", s, Safe(s), one)
		}
		if c := EscapeCut(s, 16); !strings.HasPrefix(one, c) || len(c) > 16+6+utf8.UTFMax {
			t.Fatalf("EscapeCut(%q, 16) = %q", s, c)
		}
		var out bytes.Buffer
		w := NewWriter(&out)
		mid := len(s) / 2
		w.Write([]byte(s[:mid]))
		w.Write([]byte(s[mid:]))
		w.Flush()
		if out.String() != lines {
			t.Fatalf("Writer(%q) = %q, want %q", s, out.String(), lines)
		}
	})
}
