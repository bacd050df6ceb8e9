#!/usr/bin/env bash
# fetch.sh - pre-fetch the standard test runtimes (Bun and Node.js binaries
# from the npm registry) into the runtime cache, so that the end-to-end tests
# do not each wait for a download. Safe to run repeatedly and in parallel
# with tests: a cached runtime is not fetched again.
#
# The cache is /var/cache/bm2-test/runtimes, or $BM2_TEST_CACHE. The list of
# runtimes lives in runtimes.go (Standard); this runs the package's
# TestFetchStandard, which fetches each one and checks that it runs.
set -euo pipefail
cd "$(dirname "$0")"
command -v npm >/dev/null || { echo "fetch.sh: npm is needed" >&2; exit 1; }
exec go test -count=1 -run '^TestFetchStandard$' -v . "$@"
