package config

import "strings"

// HasOwnComments tells whether a TOML file holds a comment other than the
// header Marshal starts it with (MarshalHeader, or PrivateHeader for a
// private part): something a person wrote there, which rewriting the file
// in Marshal's form would lose. Everything else a rewrite changes (the
// order of keys, spacing, quoting) reads back as the same project.
func HasOwnComments(data []byte) bool {
	s := strings.TrimPrefix(string(data), "\ufeff")
	for _, h := range []string{MarshalHeader, PrivateHeader} {
		if rest, ok := strings.CutPrefix(s, h); ok {
			s = rest
			break
		}
	}
	return hasComment(s)
}

// hasComment finds a "#" outside every TOML string (basic, literal, and
// their multi-line forms): the start of a comment. A string left open
// ends the search; such a file does not parse, and is not rewritten.
func hasComment(s string) bool {
	for i := 0; i < len(s); i++ {
		switch q := s[i]; q {
		case '#':
			return true
		case '"', '\'':
			delim := strings.Repeat(string(q), 3)
			if strings.HasPrefix(s[i:], delim) {
				end := multiLineEnd(s, i+3, q)
				if end < 0 {
					return false
				}
				i = end - 1
				continue
			}
			j := i + 1
			for j < len(s) && s[j] != q && s[j] != '\n' {
				if q == '"' && s[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		}
	}
	return false
}

// multiLineEnd returns the index just past the """ (or ”') that closes a
// multi-line string whose text starts at from, -1 if none does. Up to two
// quotes right before the delimiter belong to the text.
func multiLineEnd(s string, from int, q byte) int {
	delim := strings.Repeat(string(q), 3)
	for k := from; k < len(s); k++ {
		if q == '"' && s[k] == '\\' {
			k++
			continue
		}
		if strings.HasPrefix(s[k:], delim) {
			e := k + 3
			for e < len(s) && s[e] == q && e-k < 5 {
				e++
			}
			return e
		}
	}
	return -1
}
