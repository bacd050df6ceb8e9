// Package sandbox boots throw-away systemd machines for bm2's end-to-end
// tests.
//
// bm2 is a systemd-native process manager, so its interesting behaviour can
// only be observed with a real systemd as PID 1: units, slices, the journal,
// restarts, cgroup limits. The machines bm2 is developed and tested on do not
// run systemd as PID 1, and even where they do, tests must not install units
// into the developer's real system. This package boots systemd 252+ as PID 1
// of fresh Linux namespaces instead, in about a second, and tears it down
// without leaving anything behind.
//
// # How a sandbox is built
//
// [Boot] (or [New] in tests) does, as root:
//
//  1. Create a cgroup named after the sandbox id (bm2-e2e-<pid>-<start>-<n>)
//     in every mounted cgroup hierarchy, next to the calling process's own
//     cgroup. On a cgroup v1 "hybrid" host that includes the name=systemd and
//     unified hierarchies and every v1 controller (memory, pids, ...), so that
//     the booted systemd's slices and services never share a cgroup with the
//     host or with another sandbox.
//  2. Start a process that joins those cgroups and execs
//     unshare --pid --mount --cgroup --uts --ipc --net --fork --kill-child,
//     running boot-inner.sh (embedded in this package) as the new PID 1.
//  3. boot-inner.sh makes all mounts private, builds a root file system that
//     is an overlay of the host's / with a tmpfs upper layer, and gives it,
//     much like systemd-nspawn: a private /dev (tmpfs with null, zero, full,
//     random, urandom and tty bound in, its own devpts and shm); a fresh
//     /proc whose /proc/sys is read-only except for the network namespace's
//     /proc/sys/net; a fresh read-only /sys; fresh cgroup mounts created
//     inside the new cgroup namespace, hence rooted at the sandbox's
//     cgroups; tmpfs on /run and /tmp. It bind-mounts the repository and any
//     other requested host directories at the same paths, brings up the
//     loopback interface of the new network namespace, pivots into the new
//     root, writes a fresh /etc/hostname and /etc/machine-id, masks units
//     that would act on the host (kernel modules, sysctl, binfmt) or are
//     noise (distribution maintenance timers), and execs
//     /lib/systemd/systemd --unit=basic.target as PID 1 with $container set
//     and without CAP_SYS_MODULE and CAP_SYS_TIME.
//  4. Boot polls systemctl is-system-running inside the sandbox until it
//     reports running or degraded.
//
// Commands are run inside with nsenter (see [Machine.Exec] and
// [Machine.Sh]); they join the sandbox's root cgroup and all of its
// namespaces, and get a fixed, predictable environment that includes the
// host's Go build and module caches, so a make install inside is fast.
//
// # What the host sees
//
// Writes inside a sandbox go to its tmpfs, except writes to bind-mounted
// directories (the repository and [Options.Binds]), which are the host's real
// directories. The host's /tmp, /etc, /dev, sysctls and /sys/fs/cgroup are
// never modified, the sandbox has no network but loopback, and its hostname,
// machine id and journal are its own.
//
// [Machine.Close] SIGKILLs the sandbox's PID 1, which makes the kernel kill
// every process of its PID namespace, waits for the boot process to exit and
// removes the sandbox's cgroup directories, deepest first. It touches nothing
// outside the sandbox's own cgroups and its staging directory (in $TMPDIR,
// holding only the boot script on the host's side). The boot
// process is started with a parent-death signal and --kill-child, so even if
// the test binary itself dies, the sandbox dies with it; only its cgroup
// and staging directories can be left over, and [Sweep] (which [New] runs
// once per process) removes those of sandboxes whose owning process is gone.
//
// # Requirements
//
// Root, util-linux (unshare, nsenter, setpriv, findmnt, mountpoint),
// iproute2, overlayfs and systemd 252 or newer at /lib/systemd/systemd.
// [RequireRoot] skips a test when these are missing, or fails it when the
// CI environment variable is "true".
package sandbox
