package units

import (
	"slices"
	"strings"
)

// File is a unit file or drop-in under construction: a header comment and
// sections, rendered as go-systemd's unit.SerializeSections renders them.
// Sections and keys keep the order in which they were first added, so
// rendering is deterministic.
type File struct {
	comments []string
	sections []string // names, in the order of first use
	entries  []entry
}

type entry struct {
	section    int // index in sections
	key, value string
}

// Reset empties f for another file, keeping its memory.
func (f *File) Reset() {
	f.comments, f.sections, f.entries = f.comments[:0], f.sections[:0], f.entries[:0]
}

// Comment adds a "# " line to the file's header.
func (f *File) Comment(line string) { f.comments = append(f.comments, line) }

// Add appends key=value to the named section, creating it on first use. The
// value must already be escaped for its key (see the Quote functions).
func (f *File) Add(sectionName, key, value string) {
	s := slices.Index(f.sections, sectionName)
	if s < 0 {
		s = len(f.sections)
		f.sections = append(f.sections, sectionName)
	}
	f.entries = append(f.entries, entry{section: s, key: key, value: value})
}

// Bytes renders the file: the comments, a blank line, then each section's
// "[Name]" line and its "Key=value" lines, a blank line between sections.
// It is built in one buffer of the exact size: the generator renders
// thousands of these at every daemon-reload.
func (f *File) Bytes() []byte {
	n := f.size()
	if n == 0 {
		return nil
	}
	return f.AppendTo(make([]byte, 0, n))
}

// AppendTo appends the file as Bytes renders it to b, growing it once.
func (f *File) AppendTo(b []byte) []byte {
	b = slices.Grow(b, f.size())
	for _, c := range f.comments {
		b = append(b, "# "...)
		b = append(b, c...)
		b = append(b, '\n')
	}
	if len(f.comments) > 0 && len(f.sections) > 0 {
		b = append(b, '\n')
	}
	for i, s := range f.sections {
		b = append(b, '[')
		b = append(b, s...)
		b = append(b, "]\n"...)
		for _, e := range f.entries {
			if e.section == i {
				b = append(b, e.key...)
				b = append(b, '=')
				b = append(b, e.value...)
				b = append(b, '\n')
			}
		}
		if i < len(f.sections)-1 {
			b = append(b, '\n')
		}
	}
	return b
}

// size is the length of the rendered file.
func (f *File) size() int {
	n := 0
	for _, c := range f.comments {
		n += len("# \n") + len(c)
	}
	if len(f.comments) > 0 && len(f.sections) > 0 {
		n++
	}
	for i, s := range f.sections {
		n += len("[]\n") + len(s)
		if i < len(f.sections)-1 {
			n++
		}
	}
	for _, e := range f.entries {
		n += len("=\n") + len(e.key) + len(e.value)
	}
	return n
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

// QuoteEnvFile renders one assignment for a file named in
// EnvironmentFile=, which systemd reads like a shell would a double-quoted
// string: `"`, `\`, "`" and "$" are escaped with a backslash, everything
// else (newlines included) is kept as it is, and nothing is expanded.
func QuoteEnvFile(name, value string) string {
	var b strings.Builder
	b.Grow(len(name) + len(value) + 4)
	b.WriteString(name)
	b.WriteString(`="`)
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '"', '\\', '`', '$':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("\"\n")
	return b.String()
}

func cQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2) // the quotes; escapes are rare
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
