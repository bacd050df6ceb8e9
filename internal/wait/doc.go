// Package wait is the one wait of serve, start, restart, reload and
// scale: until every instance is online (listening, confirmed by the
// reusePort probe, healthy), or until one restarted instance is back.
//
// It is three parts, so that each can be read and tested alone. The
// step (wait.go) is pure: a Waiter takes a snapshot of the world and says
// what to print, whether the wait is over, what failed and what to look
// at next. The looker (look.go) takes the snapshots: its I/O is a [Host]
// (package control's is systemd, the journal, /proc and the scope's
// files), and it keeps when it last did each costly thing, so that a look
// costs the host no more than the step asked for. The [Driver]
// (drive.go) runs them on a [Clock] and says the step's words to a
// [Reporter]; a wait that does not succeed ends with an [Ending], which
// the caller explains (it knows the reasons' table and the logs).
package wait
