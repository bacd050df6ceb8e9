// Package testutil holds what several packages' tests share: the first
// line where a golden file and the output part, a generated section of a
// man page kept in step with its source, a buffer a test may read while a
// command writes it, and the way the test caches (runtimes, root file
// systems) are filled. Tests only; nothing in a binary imports it.
package testutil
