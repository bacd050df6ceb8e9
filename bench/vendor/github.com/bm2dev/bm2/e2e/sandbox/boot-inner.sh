#!/bin/bash
# boot-inner.sh - second stage of a bm2 e2e sandbox boot.
#
# Usage: boot-inner.sh STAGING HOSTNAME CONTAINER [BIND...]
#
#   STAGING    an existing, empty host directory; a tmpfs is mounted on it in
#              this (private) mount namespace only, so the host never sees it.
#   HOSTNAME   the sandbox's hostname.
#   CONTAINER  value of $container for the booted systemd (the sandbox id).
#   BIND       an absolute host path to bind-mount at the same path inside,
#              read-write, or PATH:ro for a read-only bind. It must be free
#              of symlinks (canonical), as it is created below the new root
#              before the pivot, when absolute symlinks still point at the
#              host's root.
#
# It must run as root inside fresh namespaces, i.e. under
#   unshare --pid --mount --cgroup --uts --ipc --net --fork
# started from a process that already sits in the sandbox's own cgroup in
# every mounted hierarchy (the Go side, sandbox.Boot, arranges that). It builds
# a throw-away root file system (an overlay of the host's /, or of
# $BM2_E2E_LOWER, with a tmpfs upper layer), gives it private /dev, /proc, /sys, /run, /tmp and cgroup mounts,
# pivots into it and execs systemd as PID 1.
#
# Everything the booted systemd writes lands in tmpfs and vanishes with the
# mount namespace; the host-global knobs it would otherwise turn (sysctls,
# binfmt_misc, kernel modules, sysfs, device nodes) are read-only, absent or
# masked, much as systemd-nspawn does it. The only host paths the sandbox can
# write are the BIND paths.
set -euo pipefail

die() { echo "boot-inner: $*" >&2; exit 1; }

[ $# -ge 3 ] || die "usage: boot-inner.sh STAGING HOSTNAME CONTAINER [BIND...]"
STAGING=$1 NAME=$2 CONTAINER=$3
shift 3
[ -d "$STAGING" ] || die "staging dir $STAGING does not exist"

# Units that would act on the host (kernel modules) or are just noise in a
# test machine (distribution maintenance timers). Masked inside only.
MASK=(
	systemd-modules-load.service
	systemd-sysctl.service
	systemd-binfmt.service
	proc-sys-fs-binfmt_misc.automount
	proc-sys-fs-binfmt_misc.mount
	sys-kernel-debug.mount
	sys-kernel-tracing.mount
	sys-kernel-config.mount
	sys-fs-fuse-connections.mount
	apt-daily.timer
	apt-daily-upgrade.timer
	dpkg-db-backup.timer
	e2scrub_all.timer
	e2scrub_reap.service
	fstrim.timer
	logrotate.timer
	man-db.timer
)

# Nothing we mount below may propagate back to the host.
mount --make-rprivate /

mount -t tmpfs -o mode=755 bm2-e2e-root "$STAGING"
mkdir "$STAGING/upper" "$STAGING/work" "$STAGING/merged"
# Only the host's root file system itself is the lower layer: overlayfs does
# not follow submounts, which is what we want (everything else gets its own
# mount below).
# BM2_E2E_LOWER is another root file system to boot instead (a Debian
# release unpacked by debootstrap, with a newer systemd). The host's
# binaries run this script up to the pivot; what follows it (rm, hostname,
# tr, setpriv, env, systemd) comes from that root.
LOWER=${BM2_E2E_LOWER:-/}
[ -x "$LOWER/usr/lib/systemd/systemd" ] || die "$LOWER has no usr/lib/systemd/systemd"
mount -t overlay overlay \
	-o "lowerdir=$LOWER,upperdir=$STAGING/upper,workdir=$STAGING/work" "$STAGING/merged"
M=$STAGING/merged

# /dev: a tmpfs with the harmless device nodes bound in, its own devpts
# instance and shm. Not the host's /dev, where systemd-tmpfiles would create
# nodes and links and journald would read the kernel log.
mount -t tmpfs -o mode=755,nosuid,size=4m bm2-e2e-dev "$M/dev"
# Fresh nodes, never binds of the host's: systemd chowns and chmods its
# console (root:tty 0620), and with /dev/console bound to the host's
# /dev/null that made the host's /dev/null unwritable for everyone but root.
mknod -m 666 "$M/dev/null" c 1 3
mknod -m 666 "$M/dev/zero" c 1 5
mknod -m 666 "$M/dev/full" c 1 7
mknod -m 666 "$M/dev/random" c 1 8
mknod -m 666 "$M/dev/urandom" c 1 9
mknod -m 666 "$M/dev/tty" c 5 0
mknod -m 600 "$M/dev/console" c 1 3
mkdir -m 755 "$M/dev/pts"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5,nosuid,noexec devpts "$M/dev/pts"
ln -s pts/ptmx "$M/dev/ptmx"
mkdir -m 1777 "$M/dev/shm"
mount -t tmpfs -o mode=1777,nosuid,nodev bm2-e2e-shm "$M/dev/shm"
ln -s /proc/self/fd "$M/dev/fd"
ln -s /proc/self/fd/0 "$M/dev/stdin"
ln -s /proc/self/fd/1 "$M/dev/stdout"
ln -s /proc/self/fd/2 "$M/dev/stderr"

# /proc: our PID namespace's, with the host-global sysctls read-only (the
# network ones belong to our network namespace and stay writable).
mount -t proc -o nosuid,nodev,noexec proc "$M/proc"
mount --bind "$M/proc/sys" "$M/proc/sys"
mount --bind "$M/proc/sys/net" "$M/proc/sys/net"
mount -o remount,bind,ro,nosuid,nodev,noexec "$M/proc/sys"
if [ -e "$M/proc/sysrq-trigger" ]; then
	mount --bind "$M/proc/sysrq-trigger" "$M/proc/sysrq-trigger"
	mount -o remount,bind,ro "$M/proc/sysrq-trigger"
fi

# /sys: a fresh, read-only sysfs (showing our network namespace's devices).
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$M/sys"

# Fresh cgroup mounts, created inside our cgroup namespace and therefore
# rooted at the sandbox's own cgroups. The host's tree is not visible at all.
HC=/sys/fs/cgroup
if [ "$(stat -f -c %T "$HC")" = cgroup2fs ] || [ "${BM2_E2E_CGROUP:-}" = unified ]; then
	# Pure cgroup v2 host, or BM2_E2E_CGROUP=unified: the v2 hierarchy
	# alone (the sandbox's own v2 cgroup is its root), as systemd 256 and
	# later want it; the controllers that the host's v1 hierarchies hold
	# are not in it.
	mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$M$HC"
else
	mount -t tmpfs -o mode=755,nosuid,nodev,noexec,size=4m bm2-e2e-cgroup "$M$HC"
	for c in "$HC"/*; do
		name=${c##*/}
		if [ -L "$c" ]; then
			# e.g. cpu -> cpu,cpuacct
			ln -s "$(readlink "$c")" "$M$HC/$name"
			continue
		fi
		mountpoint -q "$c" || continue
		mkdir -p "$M$HC/$name"
		case $(stat -f -c %T "$c") in
		cgroup2fs)
			mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$M$HC/$name"
			;;
		*)
			# Reuse the hierarchy's controller / name= options, dropping
			# the generic and per-mount ones.
			opts= controllers=
			IFS=, read -ra fsopts <<<"$(findmnt -n -o FS-OPTIONS --mountpoint "$c")"
			for o in "${fsopts[@]}"; do
				case $o in
				rw | ro | noprefix | clone_children | xattr | cpuset_v2_mode | favordynmods | release_agent=*) ;;
				name=*) opts=$opts,$o ;;
				*) controllers=1 opts=$opts,$o ;;
				esac
			done
			opts=${opts#,}
			[ -n "$opts" ] || die "cannot tell which hierarchy $c is"
			# A named hierarchy without controllers needs "none", or the
			# kernel would try to bind every free controller to it.
			[ -n "$controllers" ] || opts=none,$opts
			mount -t cgroup -o "nosuid,nodev,noexec,$opts" cgroup "$M$HC/$name"
			;;
		esac
	done
fi

# The cgroup v2 hierarchy, where systemd keeps a directory per unit (what
# cgroup BPF programs such as bm2's port fence attach to): on a host with v1
# hierarchies, at /sys/fs/cgroup/unified, mirrored above when the host has
# it there and mounted here when it does not (the Go side mounted it on the
# host elsewhere to give us a v2 cgroup of our own, UnifiedFallback), so
# the booted systemd runs in hybrid mode. BM2_E2E_CGROUP=legacy leaves it
# out and keeps systemd from adding it: legacy mode, as on a v1 host whose
# systemd does not use it.
if [ "$(stat -f -c %T "$M$HC")" != cgroup2fs ]; then
	case ${BM2_E2E_CGROUP:-hybrid} in
	hybrid)
		if ! mountpoint -q "$M$HC/unified"; then
			mkdir -p "$M$HC/unified"
			mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$M$HC/unified"
		fi
		;;
	legacy)
		if mountpoint -q "$M$HC/unified"; then
			umount "$M$HC/unified"
			rmdir "$M$HC/unified"
		fi
		# systemd 252 mounts the unified hierarchy itself when it is
		# missing (hybrid is its default); on a read-only tmpfs it
		# cannot create the mount point and stays in legacy mode.
		mount -o remount,ro "$M$HC"
		;;
	*) die "BM2_E2E_CGROUP=$BM2_E2E_CGROUP: want hybrid, legacy or unified" ;;
	esac
fi

mount -t tmpfs -o mode=755,nosuid,nodev bm2-e2e-run "$M/run"
mount -t tmpfs -o mode=1777,nosuid,nodev bm2-e2e-tmp "$M/tmp"

for b in "$@"; do
	src=${b%:ro} ro=
	[ "$src" != "$b" ] && ro=1
	[ -d "$src" ] || die "bind source $src is not a directory"
	mkdir -p "$M$src"
	mount --rbind "$src" "$M$src"
	if [ -n "$ro" ]; then
		mount -o remount,bind,ro "$M$src"
	fi
done

ip link set lo up

mkdir -p "$M/oldroot"
cd "$M"
pivot_root . oldroot
umount -l /oldroot
rmdir /oldroot
cd /

# From here on, paths resolve inside the sandbox (and writes land in the
# overlay's tmpfs upper layer): a hostname and machine id of its own
# (systemd sets the hostname from /etc/hostname, and names the journal after
# the machine id), and the masked units.
rm -f /etc/hostname /etc/machine-id
echo "$NAME" >/etc/hostname
hostname "$NAME"
tr -d - </proc/sys/kernel/random/uuid >/etc/machine-id
mkdir -p /etc/systemd/system
for u in "${MASK[@]}"; do
	ln -sf /dev/null "/etc/systemd/system/$u"
done

# Without CAP_SYS_MODULE and CAP_SYS_TIME, nothing in the sandbox can load
# kernel modules or set the (host-global) clock.
# Standard input from the sandbox's own /dev/null, not an inherited host file.
exec </dev/null
exec setpriv --bounding-set -sys_module,-sys_time \
	env -i container="$CONTAINER" /lib/systemd/systemd --system --unit=basic.target
