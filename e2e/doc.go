// Package e2e holds bm2's end-to-end tests: each boots a real systemd in
// fresh namespaces (package sandbox), installs the freshly built bm2 inside
// with `make install`, puts real Bun and Node.js binaries from npm in
// /usr/local/bin (package runtimes), and drives the result with systemctl,
// journalctl, curl and the bm2 command, as an operator would.
//
// They boot the host's systemd; TestNewerSystemd boots the one of a newer
// Debian release from a root file system of its own (package roots), and
// BM2_E2E_RELEASE=trixie boots the other beds from it too (all but the
// cgroup v1 one; the package tests keep their own sandboxes).
//
// They need root; without it they skip, except with CI=true, where they
// must run.
package e2e
