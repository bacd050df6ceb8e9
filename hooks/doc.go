// Package hooks is what systemd runs around each bm2 instance, besides the
// reusePort probe:
//
//   - Run wraps the runtime in ExecStart=: it refuses a missing runtime or
//     one below its floor (Bun 1.4.0, Node.js 24.0.0) before the app starts,
//     with a message in the unit's log (so in `systemctl status`), an event
//     runtime_rejected, and exit status 78, which the template names in
//     RestartPreventExitStatus= so that a refused runtime never loops; an
//     accepted runtime replaces the wrapper (execve), keeping the main PID.
//   - Exited is ExecStopPost=: after every abnormal exit it appends a line to
//     the instance's crash.log and emits instance_crashed.
//   - Failed is the OnFailure= unit: when an instance gives up (restart
//     budget exhausted, runtime refused) it emits instance_errored and
//     writes a crash.log line; its neighbours keep serving.
//
// All three are subcommands of bm2-probe, bm2's helper binary in /usr/lib/bm2.
package hooks
