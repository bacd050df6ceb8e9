package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MarshalHeader is the comment that starts every file [Marshal] writes.
const MarshalHeader = "# Registered by `bm2 serve`. Edit the project's bm2.toml and run `bm2 serve`\n" +
	"# again (or edit this file and run `systemctl daemon-reload`). See bm2.toml(5).\n"

// PrivateHeader starts the private part Marshal writes.
const PrivateHeader = "# The private part of a project registered by `bm2 serve`: what other users\n" +
	"# must not read. Owned by root, mode 0600. See bm2.toml(5).\n"

// Marshal renders a project as the canonical files that `bm2 serve`
// registers: the project file, which every user may read, and the private
// part ([env] and the webhook, nil when the project has neither), which
// only root may. Keys come in the key table's order; name, script, cwd,
// runtime, instances, port and exec_mode always, every other key only
// when it differs from its default. The same project always gives the
// same bytes, and parsing them back (ParseSource) gives p again (for
// instances = "max", with the same NumCPU).
func Marshal(p *Project) (public, private []byte) {
	var pub, priv bytes.Buffer
	pub.WriteString(MarshalHeader)
	tables := map[string]*[2]bytes.Buffer{} // table -> public, private lines
	var order []string
	for _, s := range specs {
		if s.get == nil || s.kind == kTable {
			continue
		}
		v, ok := s.get(p)
		if !ok {
			continue
		}
		table, key, nested := strings.Cut(s.key, ".")
		if !nested {
			fmt.Fprintf(&pub, "%s = %s\n", s.key, tomlValue(v))
			continue
		}
		t, ok := tables[table]
		if !ok {
			t = &[2]bytes.Buffer{}
			tables[table] = t
			order = append(order, table)
		}
		side := 0
		if s.private {
			side = 1
		}
		fmt.Fprintf(&t[side], "%s = %s\n", key, tomlValue(v))
	}
	if len(p.Env) > 0 {
		fmt.Fprintf(&priv, "\n[env]\n")
		for _, e := range p.Env { // sorted by Parse
			fmt.Fprintf(&priv, "%s = %s\n", tomlKey(e.Name), TOMLString(e.Value))
		}
	}
	for _, table := range order {
		t := tables[table]
		for side, out := range []*bytes.Buffer{&pub, &priv} {
			if t[side].Len() > 0 {
				fmt.Fprintf(out, "\n[%s]\n", table)
				out.Write(t[side].Bytes())
			}
		}
	}
	if priv.Len() == 0 {
		return pub.Bytes(), nil
	}
	return pub.Bytes(), append([]byte(PrivateHeader), priv.Bytes()...)
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return TOMLString(v)
	case int:
		return strconv.Itoa(v)
	case []int:
		q := make([]string, len(v))
		for i, n := range v {
			q[i] = strconv.Itoa(n)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case bool:
		return strconv.FormatBool(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = TOMLString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	panic(fmt.Sprintf("config: no TOML form for %T", v))
}

var bareKeyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKeyRE.MatchString(k) {
		return k
	}
	return TOMLString(k)
}

// TOMLString quotes s as a TOML basic string: quotes, backslashes and every
// control character TOML forbids in a basic string are escaped; other
// characters, including non-ASCII ones, are kept as they are. Invalid UTF-8
// is replaced by U+FFFD, as TOML documents must be valid UTF-8.
func TOMLString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\u%04X`, r)
			case r == utf8.RuneError:
				b.WriteRune(utf8.RuneError)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
