// Package jsruntime knows the JavaScript runtimes bm2 starts: where systemd
// finds them, how to ask their version, and the floors below which bm2
// refuses them (Bun 1.4.0, Node.js 24.0.0: the first releases whose
// listeners take reusePort). `bm2 check` reports against the floors; every
// instance start enforces them (see the run wrapper in package hooks).
package jsruntime
