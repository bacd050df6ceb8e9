// Package preload is bm2's reusePort preload, for cluster projects with
// reuseport = "preload" (bm2.toml(5)): the JavaScript file reuseport.cjs
// in this directory, and how an instance's command line loads it.
//
// make install puts the file root's, mode 0644, beside bm2-probe
// (/usr/lib/bm2/reuseport.cjs; Path), in a directory only root may write:
// the app's user cannot change it, and nothing can replace it that could
// not replace bm2-probe, which root runs. The generator names it on each
// instance's runtime command line, just before the script (Args):
// `node --require FILE` or `bun --preload FILE`, so that it reaches the
// app and no other process. What the file does to the app's listen, and
// what it leaves alone, is written at its top; the tests run it in real
// Node.js and Bun processes.
//
// The preload only asks; the reusePort probe still judges every start,
// as it judges an app that sets reusePort itself.
package preload
