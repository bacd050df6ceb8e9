// Package wording is how bm2 words what it counts and measures in the text
// it prints: "3 instances", an uptime of "2h5m", "a, b and c", an error on
// one line. It imports nothing of bm2, so that the generator, the bm2
// command and the views it renders (bm2 list, bm2 top, bm2 metrics) say a
// thing the same way.
package wording
