// Package probehelper is bm2-probe, the helper bm2's units run: [Main]
// reads its command line and hands the exit and failure hooks and the run
// wrapper to package hooks, the port fence to package portfence, the
// delivery of notifications to package notify and the relay of events to
// journald (`bm2-probe events`) to package relay. The exit hook and the
// fence, which run in an instance's cgroup, emit through package relay's
// sink; every other subcommand sends its events directly. What it does
// itself is the reusePort probe, the edge of the HTTP health check and
// that of connection steering.
//
// The health check ([Checker], `bm2-probe health <name>`, run by
// bm2-<name>-health.service) reads the project's instances from systemd
// (each one's InvocationID, UID, GID and BM2_HEALTH_PORT; the check's
// settings from its own service), starts `bm2-probe health-get` as the
// instances' user ([ChildCheck]: syscall.Credential, no supplementary
// group, an empty environment, its output capped), and hands what the
// child printed, parsed strictly, to package health's pure Step. It then
// writes the state file, and for each instance whose run reached
// health_failures, still the same run, logs instance_unhealthy, writes a
// crash.log line and queues a restart of that instance alone. A check
// that could not be made at all (the child did not start) counts for
// nothing and fails the run, so that a broken host is not taken for
// broken apps.
//
// The probe runs after every start of a cluster-mode instance
// (bm2-probe@<name>-<i>.service, pulled in by the instance's Wants=): it
// asks the kernel whether the app really shares its port, every 500 ms
// for at most 60 s from the instance coming online.
//
// [Probe.Run] is a state machine over injected systemd, clock and port
// check, so it is tested without either. It takes the port and the user
// from what systemd runs (the instance's BM2_APP_PORT, its UID and GID),
// checks as that user (package reuseport), and gives every run of the
// instance its own verdict, including a run that started while the probe
// was still busy with the one before. On an exclusive listener the first
// probe to take the errored mark (package state) stops the whole project
// over D-Bus, writes a crash.log line per instance and logs
// reuseport_missing. Its events go through package notify's sink, which
// spools their notifications for bm2-notify.service: the probe never
// waits for a webhook. A mark or a crash.log line it cannot write (a full
// disk) is said as a state_write_failed event and the reaction goes on:
// the mark falls back to the run directory (package state), and the
// project is stopped whatever could be written.
//
// In cluster mode, system scope, a confirmed run also queues
// bm2-steer@<name>-<i>.service ([Probe.Steer], not waited for): `bm2-probe
// steer add` ([Steerer.Add]) reads the instance from systemd, finds its
// listener on the port (sock_diag's listeners, then the walker of
// /proc/<pid>/fd over its control group's processes: sockdiag.Holder),
// copies it with pidfd_getfd and, under the project's lock, puts it in
// slot BM2_APP_INSTANCE of the group package steer pins for the project
// (made, or made again for a new port, by steer.Store.Group). What the
// host cannot do (steer.UnavailableError, a steer.ListenerError) is a
// steering_unavailable event once per project and boot, and exit 0: the
// port keeps the kernel's hash. `bm2-probe steer drain`, the instance's
// ExecStop=+, takes the slot out (when another one is live) and waits,
// every DrainPoll, until the instance's accept queue is empty and none of
// its connections has bytes unread or unsent but keep-alive connections
// still carrying requests (which waiting cannot drain), at most
// BM2_DRAIN_MS: the wait is drainStep, a pure function of the looks at
// the sockets and the deadline. It never fails the stop.
package probehelper
