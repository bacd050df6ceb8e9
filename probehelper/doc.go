// Package probehelper is bm2-probe, the helper bm2's units run: [Main]
// reads its command line and hands each subcommand to the package of its
// concern. It is a table of subcommands (commands), each one a function
// of the same shape, which checks its own arguments and wires the
// package's runner to systemd, the scope's files and the kernel:
//
//   - the reusePort probe to package probe;
//   - the exit and failure hooks and the run wrapper to package hooks;
//   - the port fence to package portfence;
//   - the HTTP health check and its child to package health;
//   - the memory check to package memcheck;
//   - connection steering's add, drain and prepare to package steer;
//   - the delivery of notifications to package notify;
//   - the relay of events to journald to package relay.
//
// Every event of a subcommand goes through one sink, made by newEvents:
// the journal and the scope's notification spool (package notify). The
// exit hook and the fence, which run in an instance's cgroup, have their
// events relayed (package relay's sink in place of the journal); every
// other subcommand sends its events directly.
package probehelper
