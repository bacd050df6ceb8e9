// Package probe is the reusePort probe, `bm2-probe <project>-<i>`: it runs
// after every start of an instance (bm2-probe@<name>-<i>.service, pulled
// in by the instance's Wants=) and asks the kernel whether the app really
// shares its port, every 500 ms for at most 60 s from the instance coming
// online; in every mode it resets the instance's restart budget once a
// run is healthy.
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
// bm2-steer@<name>-<i>.service ([Probe.Steer], not waited for), which
// puts the run's listener in its port's kernel-steered turn (package
// steer).
package probe
