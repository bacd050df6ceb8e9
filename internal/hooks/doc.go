// Package hooks is what systemd runs around each bm2 instance, besides the
// reusePort probe:
//
//   - Run wraps the runtime in ExecStart=, as the app's user: it reads the
//     project's env_file (as that user, never through a symlink; package
//     envfile), refuses a missing runtime or one below its floor (Bun 1.4.0,
//     Node.js 24.0.0) before the app starts, with a message in the unit's
//     log (so in `systemctl status`) and exit status 78, which the template
//     names in RestartPreventExitStatus= so that a refusal never loops; an
//     accepted runtime replaces the wrapper (execve), keeping the main PID.
//     It emits no event: it runs as the app's user, who cannot speak for
//     bm2.
//   - Exited is ExecStopPost=+, as root, after every stop: it asks systemd
//     over D-Bus how the run ended (never $SERVICE_RESULT), and after an
//     abnormal exit appends a line to the instance's crash.log (0640,
//     root's and the run's group's) and emits instance_crashed. An exit
//     status 78 it leaves to Failed (Later): judging it can take a
//     transient unit, longer than TimeoutStopSec= bounds ExecStopPost=.
//     Exit statuses 200 (CHDIR) and 217 (USER) are systemd's own "cannot
//     start": cwd_missing and user_missing, never restarted
//     (RestartPreventExitStatus= too). PortBlocked follows it: a failed
//     run whose port a process of another user holds (sock_diag gives the
//     owner's UID; /proc the holder's name and pid, for the message only)
//     errors that instance, never its neighbours, as port_in_use: a mark
//     under /run (package state) keeps it from starting again until
//     `bm2 start` or the next boot.
//   - Failed is the OnFailure= unit, as root: when an instance gives up
//     (restart budget exhausted, refused) it emits instance_errored and
//     writes a crash.log line; its neighbours keep serving. After exit
//     status 78, never restarted, it first checks the refusal itself
//     (VerifyRefusal: the env_file with the app's user's filesystem
//     identity, the runtime's --version only in a transient unit with the
//     instance's account and sandbox, package confine, never in its own
//     context; unconfirmed when that cannot be done) and emits
//     runtime_rejected with the reason it found.
//
// Exited and Failed emit through the sink bm2-probe gives them (package
// notify): the journal, and a notification spooled for bm2-notify.service
// when the event reaches the project's [notify] level. They never wait
// for a webhook. Exited runs in the instance's cgroup, whose journal rate
// limit the app's output uses up: its events reach the journal through
// package relay (bm2-events.service), a few tens of milliseconds after
// it returns. Failed has a unit of its own and sends directly.
//
// A file they cannot write (a crash.log on a full /var/log, an instance's
// mark on a full /run; the spool is the sink's) is said as its own event,
// state_write_failed, naming the file and the errno (ENOSPC, EROFS, EIO),
// and the hook goes on and succeeds: the event it wrote the file for is in
// the journal all the same, the instance restarts or gives up as its
// budget says, and a failing ExecStopPost= would only add a vaguer record.
// Only a failure that cannot be said either fails the hook.
//
// All three are subcommands of bm2-probe, bm2's static helper binary in
// /usr/lib/bm2, whose root subcommands start with an empty environment.
package hooks
