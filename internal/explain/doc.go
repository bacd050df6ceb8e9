// Package explain words why a project or an instance failed, and what can
// be known to fail before it starts, from package reason's table: the
// errored mark and the event that set it (reuseport_missing,
// loopback_only, port_in_use), the exit hook's runtime_rejected event for
// a refusal (exit status 78), systemd's own cannot-start statuses (200:
// cwd_missing, 217: user_missing), and for a crash loop the last crash.log
// line, or the missing script or directory that caused it.
//
// Before start (Preflight), it checks as the project's user what that
// user must reach: the account, the working directory, the script, the
// env_file; what the mode bits alone decide is certain (serve refuses
// it), the rest a warning. A port an exclusive listener holds ([Held]) is
// found the same way.
//
// A wait of serve, start, restart, reload or scale that did not succeed
// is worded by [Waits]: which instance, why, what to do, and the lines it
// logged.
//
// It reads the host only through a [Host]: the journal's events, the
// errored marks, crash.log, the user database and the project's ports.
// [Scope] is the one on the real host's readers, which package control
// fills in from its environment.
package explain
