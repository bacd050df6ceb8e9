// Package roots provides root file systems of other Debian releases for
// bm2's end-to-end tests, so that bm2 is tested under the systemd those
// releases ship as well as under the host's.
//
// The host is Debian 12 with systemd 252; Debian 13 (trixie) ships systemd
// 257, which restarts a crashed service through the failed state unless
// told otherwise (RestartMode=, 254), refuses cgroup v1, and differs in
// many smaller ways. A sandbox (e2e/sandbox, Options.Root) boots such a
// root as the lower layer of its overlay instead of the host's /.
//
// A root is made with debootstrap (minbase and Packages) from the Debian
// mirror, then moved atomically into a cache outside the git tree:
// DefaultCacheDir, or $BM2_TEST_ROOTS if set, one directory per release
// and package list, e.g. /var/cache/bm2-test/roots/trixie-3f2a9c1e. A
// build interrupted half-way leaves only a temporary directory, which the
// next build of the same root removes; parallel test processes serialise
// on a lock file, and a cache hit costs one stat. Trixie takes about
// 45 s and 280 MiB. A root is not updated once made (a point release does
// not reach it), and a new package list makes a new one beside the old:
// remove the cache directory to start afresh.
//
// To make the roots ahead of the tests, as `make test-deps` does, run
// `go test -run '^TestFetch$' ./e2e/roots`. In a test, Require makes one
// or skips.
package roots
