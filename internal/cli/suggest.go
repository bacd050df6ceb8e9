package cli

import (
	"fmt"
	"strings"
)

// unknownCommand is the usage error for a word that names no command,
// with the commands it may have been meant for: `unknown command "lsit";
// did you mean "list"?`.
func unknownCommand(word string) error {
	msg := fmt.Sprintf("unknown command %q", word)
	if s := suggest(word); len(s) > 0 {
		q := make([]string, len(s))
		for i, n := range s {
			q[i] = fmt.Sprintf("%q", n)
		}
		msg += "; did you mean " + orList(q) + "?"
	}
	return usageErr("", "%s", msg)
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// maxSuggestions is how many names suggest offers at most.
const maxSuggestions = 3

// suggest names the commands and aliases that word may be a slip for, in
// the command table's order: those nearest to it by edit distance
// (a letter left out, added, changed or two swapped: "lsit" is one from
// "list"), when near enough (one edit for a word of up to four letters,
// two past that: "nope" is not "top"), and those it begins (two letters at least: "stat" for
// "status"). Case does not count.
func suggest(word string) []string {
	w := strings.ToLower(word)
	if w == "" {
		return nil
	}
	limit := 2
	if len([]rune(w)) <= 4 {
		limit = 1
	}
	type cand struct {
		name   string
		dist   int
		prefix bool
	}
	var cands []cand
	best := limit + 1
	for _, c := range commands() {
		for _, name := range append([]string{c.name}, c.aliases...) {
			d := editDistance(w, name)
			p := len(w) >= 2 && strings.HasPrefix(name, w)
			if d <= limit || p {
				cands = append(cands, cand{name, d, p})
				if d <= limit {
					best = min(best, d)
				}
			}
		}
	}
	var out []string
	for _, c := range cands {
		if (c.dist == best || c.prefix) && len(out) < maxSuggestions {
			out = append(out, c.name)
		}
	}
	return out
}

// editDistance is the optimal string alignment distance between a and b
// (by runes): the fewest letters inserted, deleted or substituted, or
// adjacent pairs swapped, that turn one into the other.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// d[i][j]: distance between x[:i] and y[:j].
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
