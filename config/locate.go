package config

import "strings"

// keyLines maps every dotted key of a TOML document to the line it is set on
// (1-based). The TOML decoder does not expose key positions, so this small
// scanner follows table headers and "key =" lines, skipping multi-line
// strings and arrays. It only serves error messages: when it cannot place a
// key the message simply goes without a line number.
func keyLines(data []byte) map[string]int {
	lines := make(map[string]int)
	table := ""
	var inString string // the closing delimiter of an open multi-line string
	depth := 0          // open brackets of a multi-line array or inline table
	for n, line := range strings.Split(string(data), "\n") {
		ln := n + 1
		if inString != "" {
			if i := strings.Index(line, inString); i >= 0 {
				inString = ""
			}
			continue
		}
		s := strings.TrimSpace(line)
		if depth > 0 {
			depth += bracketDelta(s)
			continue
		}
		if s == "" || s[0] == '#' {
			continue
		}
		if strings.HasPrefix(s, "[") {
			end := strings.Index(s, "]")
			if end < 0 {
				continue
			}
			inner := strings.Trim(s[:end+1], "[]")
			table = joinKey(splitKey(inner))
			if table != "" {
				if _, ok := lines[table]; !ok {
					lines[table] = ln
				}
			}
			continue
		}
		eq := keyEnd(s)
		if eq < 0 {
			continue
		}
		key := joinKey(splitKey(s[:eq]))
		if table != "" {
			key = table + "." + key
		}
		if _, ok := lines[key]; !ok {
			lines[key] = ln
		}
		// Register the parents of dotted keys (a.b = 1 defines a).
		for i := len(key) - 1; i > 0; i-- {
			if key[i] == '.' {
				if _, ok := lines[key[:i]]; !ok {
					lines[key[:i]] = ln
				}
			}
		}
		val := strings.TrimSpace(s[eq+1:])
		for _, delim := range []string{`"""`, `'''`} {
			if strings.HasPrefix(val, delim) && !strings.Contains(val[3:], delim) {
				inString = delim
			}
		}
		if inString == "" && (strings.HasPrefix(val, "[") || strings.HasPrefix(val, "{")) {
			depth = bracketDelta(val)
			if depth < 0 {
				depth = 0
			}
		}
	}
	return lines
}

// keyEnd finds the '=' that ends the key part of a key/value line, honouring
// quoted keys; -1 when the line has none.
func keyEnd(s string) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '=':
			return i
		}
	}
	return -1
}

// splitKey splits a dotted TOML key into its parts, unquoting quoted parts.
func splitKey(s string) []string {
	var parts []string
	var cur strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

func joinKey(parts []string) string { return strings.Join(parts, ".") }

// bracketDelta counts opening minus closing brackets and braces outside
// strings and comments.
func bracketDelta(s string) int {
	d := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return d
		case c == '[' || c == '{':
			d++
		case c == ']' || c == '}':
			d--
		}
	}
	return d
}
