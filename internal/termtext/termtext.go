package termtext

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// Escape is s on one line, safe for a terminal: newlines are escaped too.
func Escape(s string) string { return escape(s, false, -1) }

// EscapeLines is Escape with newlines kept: for text whose lines bm2
// prints as lines (a log message of several lines, a log tail).
func EscapeLines(s string) string { return escape(s, true, -1) }

// EscapeField is Escape for a cell of a table (tabwriter): tabs are
// escaped too (\t), so that a value cannot shift the columns after it.
func EscapeField(s string) string {
	return strings.ReplaceAll(escape(s, false, -1), "\t", `\t`)
}

// EscapeCut is Escape cut to at most about limit bytes, never inside an
// escape or a character.
func EscapeCut(s string, limit int) string { return escape(s, false, limit) }

// Safe tells whether s prints as it is (Escape(s) == s).
func Safe(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if special(r, size, false) {
			return false
		}
		i += size
	}
	return true
}

// special tells whether the character r (size bytes of the input; an
// invalid byte is utf8.RuneError of size 1) must be escaped.
func special(r rune, size int, keepNewline bool) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r == '\t', r == '\n' && keepNewline:
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

func escape(s string, keepNewline bool, limit int) string {
	if limit < 0 && safeFor(s, keepNewline) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		if limit >= 0 && len(b) >= limit {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !special(r, size, keepNewline) {
			b = append(b, s[i:i+size]...)
			i += size
			continue
		}
		switch {
		case r == utf8.RuneError && size == 1, r < 0x80:
			switch c := s[i]; c {
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			default:
				b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
			}
		default:
			b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		}
		i += size
	}
	return string(b)
}

func safeFor(s string, keepNewline bool) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && !(c == '\n' && keepNewline) || c >= 0x7f {
			// Not plain printable ASCII: decide character by character.
			for j := i; j < len(s); {
				r, size := utf8.DecodeRuneInString(s[j:])
				if special(r, size, keepNewline) {
					return false
				}
				j += size
			}
			return true
		}
	}
	return true
}

// Writer escapes everything written through it (EscapeLines: newlines
// kept), as a last line of defence around a terminal: whatever reaches it
// unescaped is shown, not obeyed. A character split across two writes is
// held until the next one (or Flush).
type Writer struct {
	W    io.Writer
	held []byte
}

// NewWriter is a Writer around w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w} }

// Write writes p escaped; it counts p as written when the escaped form
// is.
func (w *Writer) Write(p []byte) (int, error) {
	data := p
	if len(w.held) > 0 {
		data = append(w.held, p...)
		w.held = nil
	}
	// Hold back the start of a character that is not complete yet.
	cut := len(data)
	for k := 1; k <= utf8.UTFMax-1 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < 0x80 {
			break // ASCII: nothing open
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-k:]) {
				cut = len(data) - k
			}
			break
		}
	}
	if cut < len(data) {
		w.held = append([]byte(nil), data[cut:]...)
	}
	if _, err := io.WriteString(w.W, EscapeLines(string(data[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held (the start of a character that never
// completed), escaped.
func (w *Writer) Flush() error {
	if len(w.held) == 0 {
		return nil
	}
	s := string(w.held)
	w.held = nil
	_, err := io.WriteString(w.W, EscapeLines(s))
	return err
}

// JSON is text for --json that keeps its exact bytes: a JSON string when
// it is UTF-8, otherwise, as journalctl -o json does, an array of its
// bytes. The string has every character Escape would escape written as
// \uXXXX: JSON's encoder escapes C0 controls (ESC as \u001b) but leaves
// DEL, C1 controls and bidi overrides raw, which would reach a terminal
// (and Writer, around it, would turn DEL into \x7f, which is no JSON).
type JSON string

// MarshalJSON implements json.Marshaler.
func (t JSON) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(t)) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // the encoder around it escapes HTML if it is asked to
		if err := enc.Encode(string(t)); err != nil {
			return nil, err
		}
		return escapeJSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
	}
	b := []byte{'['}
	for i := 0; i < len(t); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(t[i]), 10)
	}
	return append(b, ']'), nil
}

// escapeJSON writes the special characters left in encoded JSON (valid
// UTF-8) as \uXXXX escapes, which mean the same character in a JSON
// string. Outside strings JSON has none.
func escapeJSON(b []byte) []byte {
	if Safe(string(b)) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if special(r, size, false) && r <= 0xffff {
			out = append(out, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}
