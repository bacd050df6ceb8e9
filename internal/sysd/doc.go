// Package sysd is bm2's one adapter to systemd's D-Bus API: the connection,
// unit and instance status, jobs that are waited for (start, stop,
// restart), daemon-reload, reset-failed, and the mapping of D-Bus failures
// to errors a person can act on.
//
// Every other package talks to systemd through a small interface of its
// own that *[Conn] satisfies (and a test fake too), so nothing outside
// this package imports go-systemd's dbus package. bm2-probe's runners
// compose theirs from the interfaces of calls.go, one per call
// ([UnitReader], [Reader], [Resetter], …), so that each call is declared
// once; [Clock] is the monotonic clock of systemd's timestamps they wait
// on.
//
// Two ways in:
//
//   - [Connect] for the bm2 command, as systemctl connects: as root
//     systemd's private socket (no dbus-daemon relaying every call),
//     falling back to the system bus; for a normal user the system bus.
//   - [ConnectPrivate] for bm2's root helpers (the probe, the exit and
//     failure hooks): systemd's private socket /run/systemd/private only.
//     It is root's alone, needs no dbus-daemon, and reads no environment
//     variable (DBUS_SYSTEM_BUS_ADDRESS is never consulted).
package sysd
