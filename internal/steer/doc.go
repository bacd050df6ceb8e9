// Package steer places the connections of a SO_REUSEPORT port group
// itself, instead of leaving it to the kernel's hash: round-robin over the
// live instances, and none to an instance being drained. It is what
// bm2's cluster mode needs when N instances of an app share one port: by
// hash, 64 keep-alive connections split 27/37 (23/41, 40/24 here in
// tests), and a reload cannot take an instance out of the turn before
// stopping it.
//
// # The program
//
// An SK_REUSEPORT program (written with cilium/ebpf's asm package, see
// Instructions) attached to the group with SO_ATTACH_REUSEPORT_EBPF runs
// for each new connection (each SYN that finds the group). It takes a turn
// from a counter with an atomic fetch-and-add, picks the live slot at
// turn % n, and calls bpf_sk_select_reuseport with the sockarray
// (REUSEPORT_SOCKARRAY, slot → listening socket). Whatever fails — no
// live slot, an empty slot, a socket of another group — it returns
// SK_PASS without a selection, and the kernel falls back to its hash: it
// never drops a connection. Its attach type is SELECT_OR_MIGRATE, so the
// kernel also asks it where the connections go that a closing listener
// still had queued (accepted by the kernel, not yet by the app): instead
// of being reset they move to a live instance. Linux 5.14 or later.
//
// # The slots
//
// A slot is an instance's number; its listener sits in the sockarray at
// that index and never moves (the kernel lets a socket be in one slot of
// one sockarray: moving it would need a delete first, a moment without
// it). What the program walks is the table (an ARRAY map mapped into the
// process, each entry written with one atomic store): a count n and a
// dense list of the n live slots. Group.Add writes the socket, then the
// slot at position n (not read yet), then n+1. Group.Remove, the drain,
// is O(1) in writes: the last live slot moves into the hole, then n-1,
// then the socket leaves the sockarray. A connection placed in the middle
// of either sees a list whose first n entries are all live; one that read
// the list just before a Remove and finds the socket gone falls back to
// the hash, which may still choose the removed instance: it listens until
// bm2 stops it, so nothing is refused. A listener its process closed (a
// crash) empties its slot by itself; its turns fall back to the hash over
// the others until bm2 removes or replaces the slot.
//
// # Whose sockets
//
// The sockets are the apps': bm2 takes a copy of an instance's listener
// with pidfd_open and pidfd_getfd (Linux 5.6), adds it, and closes the
// copy; the sockarray holds no reference, the app's own fd keeps the
// socket. A socket must be a TCP listener (listen(2) done: the kernel
// makes a TCP socket part of a port group then) with SO_REUSEPORT, on the
// group's port and family. CheckListener names what is wrong before the
// kernel's terse errors do. In particular, "not supported" from
// Map.Put(slot, fd) of a Go listener is not about value sizes (4 and 8
// bytes both take an fd; only 8 can be read back, as the socket's cookie,
// 4 gives ENOSPC) nor dual-stack sockets (a [::] listener goes in): since
// Go 1.24, net.Listen makes an MPTCP socket (IPPROTO_MPTCP) where the
// kernel has net.mptcp.enabled=1, and the kernel's sockarray takes TCP
// and UDP sockets only and refuses others with ENOTSUPP (errno 524),
// which cilium/ebpf calls "not supported". ListenConfig.SetMultipathTCP
// (false) or GODEBUG=multipathtcp=0 gives a TCP listener. Node.js and Bun
// listen with plain TCP. A listener without SO_REUSEPORT, or bound but
// not listening, gets EINVAL instead. TestWhyNotSupported pins this down.
//
// # Lifetime
//
// The program belongs to the port group once attached: it outlives the
// listener it was attached through and the process that attached it, and
// goes with the group's last listener or with Detach. Group.Close only
// lets go of this process's handles. Group.Pin keeps the program and maps
// in a directory on a bpf filesystem (such as /sys/fs/bpf/bm2/<project>)
// so that a later bm2 can Open the group and change the slots.
//
// # bm2's groups
//
// A [Store] is where bm2 keeps one group per cluster-mode project of
// system scope: pinned in /sys/fs/bpf/bm2/<project> ([PinRoot]), changed
// under the project's lock (flock on /run/bm2/steer/<project>.lock, a
// directory root's alone), and marked there once a boot when the host
// cannot steer (/run/bm2/steer/<project>.unavailable: the reason and a
// line of detail, for bm2 status). [Store.Group] opens the pinned group
// or makes one, again when the project's port changed; [Store.Remove] is
// bm2 delete's. The slots are the instances' BM2_APP_INSTANCE: 0 to
// instances-1, and instances for the surge a reload starts beside them.
//
// # Add and drain
//
// A [Steerer] is the edge of one instance, run by bm2-probe. `bm2-probe
// steer add` ([Steerer.Add], bm2-steer@<name>-<i>.service, which the
// probe queues once it has confirmed a run) reads the instance from
// systemd, finds its listener on the port (sock_diag's listeners, then
// the walker of /proc/<pid>/fd over its control group's processes:
// sockdiag.Holder), copies it with pidfd_getfd and, under the project's
// lock, puts it in slot BM2_APP_INSTANCE of the project's group (made, or
// made again for a new port, by [Store.Group]). What the host cannot do
// (an [UnavailableError], a [ListenerError]) is a steering_unavailable
// event once per project and boot, and exit 0: the port keeps the
// kernel's hash. `bm2-probe steer drain` ([Steerer.Drain]), the
// instance's ExecStop=+, takes the slot out (when another one is live)
// and waits, every [DrainPoll], until the instance's accept queue is
// empty and none of its connections has bytes unread or unsent but
// keep-alive connections still carrying requests (which waiting cannot
// drain), at most BM2_DRAIN_MS: the wait is drainStep, a pure function of
// the looks at the sockets and the deadline. It never fails the stop.
//
// # What it needs
//
// Verified by TestCapabilities, running each step as root with a reduced
// bounding set:
//
//   - New (create the maps, load the program): CAP_BPF, or CAP_SYS_ADMIN;
//     CAP_NET_ADMIN is neither needed nor enough;
//   - Attach, Detach, Add, Remove, and Open of a pinned group: no
//     capability, only the fds and the pins' file permissions (checked on
//     Linux 6.18 with kernel.unprivileged_bpf_disabled=2; kernels before
//     6.5 refused every bpf() call without CAP_BPF or CAP_SYS_ADMIN while
//     that sysctl was set, so there Open and the slot changes need
//     CAP_BPF too);
//   - pidfd_getfd of another user's listener: CAP_SYS_PTRACE; of a process
//     of the caller's user, none, unless the target holds capabilities the
//     caller lacks;
//   - Pin: a bpf filesystem at the directory (mounting one takes
//     CAP_SYS_ADMIN, systemd mounts /sys/fs/bpf at boot).
//
// Available says whether all of that works here, with an *UnavailableError
// (matching ErrUnavailable) whose Reason — no_permission, kernel_too_old,
// no_bpffs — is the one bm2's steering_unavailable event reports.
//
// # Cost
//
// BenchmarkConnect (loopback, dial to accept, two listeners, a shared
// 2-core VM on Linux 6.18): 57–88 µs per connection with or without the
// program, the difference lost in the noise; the program itself runs in
// 92–100 ns (the kernel's BPF run-time statistics), about 0.15% of a
// connection's setup.
package steer
