package envfile

import (
	"strings"
	"unicode/utf8"
)

// Var is one assignment.
type Var struct {
	Name, Value string
}

// Parse reads the assignments of an environment file, in order of first
// appearance (a repeated name keeps its first place and its last value).
func Parse(data []byte) []Var {
	const (
		preKey = iota
		key
		preValue
		value
		valueEscape
		singleQuote
		doubleQuote
		doubleQuoteEscape
		comment
		commentEscape
	)
	var out []Var
	index := map[string]int{}
	var k, v strings.Builder
	lastKeySpace, lastValueSpace := -1, -1
	push := func() {
		name := k.String()
		if lastKeySpace >= 0 {
			name = name[:lastKeySpace]
		}
		val := v.String()
		k.Reset()
		v.Reset()
		if !validName(name) || !utf8.ValidString(val) {
			return
		}
		if i, ok := index[name]; ok {
			out[i].Value = val
			return
		}
		index[name] = len(out)
		out = append(out, Var{name, val})
	}
	state := preKey
	for _, c := range data { // bytes: invalid UTF-8 must reach the check as it is
		switch state {
		case preKey:
			switch {
			case c == '#' || c == ';':
				state = comment
			case !isSpace(c):
				state = key
				lastKeySpace = -1
				k.WriteByte(c)
			}
		case key:
			switch {
			case isNewline(c):
				state = preKey
				k.Reset()
			case c == '=':
				state = preValue
				lastValueSpace = -1
			default:
				if !isSpace(c) {
					lastKeySpace = -1
				} else if lastKeySpace < 0 {
					lastKeySpace = k.Len()
				}
				k.WriteByte(c)
			}
		case preValue:
			switch {
			case isNewline(c):
				state = preKey
				push()
			case c == '\'':
				state = singleQuote
			case c == '"':
				state = doubleQuote
			case c == '\\':
				state = valueEscape
			case !isSpace(c):
				state = value
				v.WriteByte(c)
			}
		case value:
			switch {
			case isNewline(c):
				state = preKey
				chop(&v, lastValueSpace)
				push()
			case c == '\\':
				state = valueEscape
				lastValueSpace = -1
			default:
				if !isSpace(c) {
					lastValueSpace = -1
				} else if lastValueSpace < 0 {
					lastValueSpace = v.Len()
				}
				v.WriteByte(c)
			}
		case valueEscape:
			state = value
			if !isNewline(c) { // an escaped newline is eaten up
				v.WriteByte(c)
			}
		case singleQuote:
			if c == '\'' {
				state = preValue
			} else {
				v.WriteByte(c)
			}
		case doubleQuote:
			switch c {
			case '"':
				state = preValue
			case '\\':
				state = doubleQuoteEscape
			default:
				v.WriteByte(c)
			}
		case doubleQuoteEscape:
			state = doubleQuote
			switch {
			case strings.IndexByte("\"\\`$", c) >= 0:
				v.WriteByte(c)
			case c != '\n':
				v.WriteByte('\\')
				v.WriteByte(c)
			}
		case comment:
			switch {
			case c == '\\':
				state = commentEscape
			case isNewline(c):
				state = preKey
			}
		case commentEscape:
			state = comment // systemd 252: a backslash continues a comment
		}
	}
	switch state {
	case preValue, value, valueEscape, singleQuote, doubleQuote, doubleQuoteEscape:
		if state == value {
			chop(&v, lastValueSpace)
		}
		push()
	}
	return out
}

func chop(b *strings.Builder, at int) {
	if at >= 0 {
		s := b.String()[:at]
		b.Reset()
		b.WriteString(s)
	}
}

func isSpace(c byte) bool   { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isNewline(c byte) bool { return c == '\n' || c == '\r' }

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
