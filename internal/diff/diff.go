package diff

import (
	"fmt"
	"strings"
)

// Lines is a diff of two texts, line by line, under a "--- aName" and
// "+++ bName" header: "-" for lines only in a, "+" for lines only in b,
// " " for the ones they share, with at most 2 lines of context around
// each change ("  ..." for the lines left out).
func Lines(aName, bName string, a, b []byte) string {
	x := strings.SplitAfter(string(a), "\n")
	y := strings.SplitAfter(string(b), "\n")
	if len(x) > 0 && x[len(x)-1] == "" {
		x = x[:len(x)-1]
	}
	if len(y) > 0 && y[len(y)-1] == "" {
		y = y[:len(y)-1]
	}
	// Longest common subsequence, from the end.
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			lines = append(lines, line{' ', x[i]})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', x[i]})
			i++
		default:
			lines = append(lines, line{'+', y[j]})
			j++
		}
	}
	near := func(k int) bool {
		for d := -2; d <= 2; d++ {
			if k+d >= 0 && k+d < len(lines) && lines[k+d].op != ' ' {
				return true
			}
		}
		return false
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	skipped := false
	for k, l := range lines {
		if !near(k) {
			skipped = true
			continue
		}
		if skipped {
			out.WriteString("  ...\n")
			skipped = false
		}
		out.WriteByte(l.op)
		out.WriteString(strings.TrimSuffix(l.text, "\n"))
		out.WriteByte('\n')
	}
	return out.String()
}
