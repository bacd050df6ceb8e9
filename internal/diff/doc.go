// Package diff is a line diff of two texts, for a person to read: what
// bm2 import shows of a bm2.toml it does not overwrite, against the
// file it would have written. A longest common subsequence of the lines,
// each change with two lines of context; the texts bm2 compares are
// project files, small enough for the quadratic table.
package diff
