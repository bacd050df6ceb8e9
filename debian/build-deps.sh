#!/bin/sh
# debian/build-deps.sh - install (as root, Debian 12 bookworm) what
# `make deb` needs beyond Go >= 1.26 (bookworm's golang-go is 1.19: use the
# upstream tarball at /usr/local/go, which debian/rules also looks for).
#
#   debhelper   dh, dh_installsysusers (Build-Depends: debhelper-compat (= 13),
#               dh-sequence-installsysusers); pulls in dpkg-dev, make, man-db, ...
#   dpkg-dev    dpkg-buildpackage, dpkg-parsechangelog, dpkg-architecture
#   build-essential  gcc and libc6-dev: cgo (net, os/user) links against libc
#   fakeroot    not needed with Rules-Requires-Root: no, but dpkg-buildpackage
#               looks for it when not run as root
#   lintian     optional; make deb runs it on the result when present
#   groff-base  man(7) rendering for `make man` and lintian's man page check
#   git         to list the files of the tree (a plain tar copy otherwise)
#
# apt needs gpgv to verify the archive's signatures, and a usable /dev/null
# (crw-rw-rw- root:root) for its unprivileged _apt helper: if `apt-get update`
# says "gpgv, gpgv2 or gpgv1 required" although gpgv is installed, check
# `ls -l /dev/null` first.
set -eu
pkgs="gpgv debhelper dpkg-dev build-essential fakeroot lintian groff-base git"
need=
for p in $pkgs; do
	dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || need="$need $p"
done
if [ -z "$need" ]; then
	echo "build-deps: all installed ($pkgs)"
	exit 0
fi
echo "build-deps: installing$need"
apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need
