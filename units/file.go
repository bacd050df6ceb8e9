package units

import (
	"bytes"
	"strings"
)

// File is a unit file or drop-in under construction. Sections and keys keep
// the order in which they were first added, so rendering is deterministic.
type File struct {
	comments []string
	sections []*section
}

type section struct {
	name    string
	entries [][2]string
}

// Comment adds a "# " line to the file's header.
func (f *File) Comment(line string) { f.comments = append(f.comments, line) }

// Add appends key=value to the named section, creating it on first use. The
// value must already be escaped for its key (see the Quote functions).
func (f *File) Add(sectionName, key, value string) {
	var s *section
	for _, x := range f.sections {
		if x.name == sectionName {
			s = x
			break
		}
	}
	if s == nil {
		s = &section{name: sectionName}
		f.sections = append(f.sections, s)
	}
	s.entries = append(s.entries, [2]string{key, value})
}

// Bytes renders the file.
func (f *File) Bytes() []byte {
	n := 0
	for _, c := range f.comments {
		n += len(c) + 3
	}
	for _, s := range f.sections {
		n += len(s.name) + 4
		for _, e := range s.entries {
			n += len(e[0]) + len(e[1]) + 2
		}
	}
	var b bytes.Buffer
	b.Grow(n)
	for _, c := range f.comments {
		b.WriteString("# ")
		b.WriteString(c)
		b.WriteByte('\n')
	}
	for i, s := range f.sections {
		if i > 0 || len(f.comments) > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("[" + s.name + "]\n")
		for _, e := range s.entries {
			b.WriteString(e[0])
			b.WriteByte('=')
			b.WriteString(e[1])
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// Specifiers escapes "%" so systemd does not expand specifiers in a value
// such as a path or a description.
func Specifiers(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// QuoteArg quotes one word of a command line (ExecStart=) so that systemd
// passes it to the program exactly as given: "%" and "$" are doubled (no
// specifier or variable expansion) and words with spaces, quotes,
// backslashes or ";" are double-quoted with C escapes.
func QuoteArg(s string) string {
	s = strings.ReplaceAll(Specifiers(s), "$", "$$")
	if s != "" && s != ";" && !strings.ContainsAny(s, " \t\"'\\") {
		return s
	}
	return cQuote(s)
}

// QuoteCommand joins words into a command line for ExecStart=.
func QuoteCommand(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = QuoteArg(w)
	}
	return strings.Join(q, " ")
}

// QuoteEnv renders one assignment for Environment=, always quoted.
func QuoteEnv(name, value string) string {
	return cQuote(Specifiers(name + "=" + value))
}

func cQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c == 0x7f {
				b.WriteString(`\x`)
				b.WriteByte("0123456789abcdef"[c>>4])
				b.WriteByte("0123456789abcdef"[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
