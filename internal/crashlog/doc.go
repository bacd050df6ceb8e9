// Package crashlog keeps each instance's crash.log: one line per abnormal
// event, with the reason first-class, where an operator looks for it:
//
//	/var/log/bm2/api/api-0.crash.log
//	2026-11-30T04:00:00.123Z reason=reuseport_missing detail="…"
//
// A crash.log stays bounded: a line that would take it beyond 1 MiB
// ([DefaultMaxSize]) first renames it to api-0.crash.log.1, replacing the
// previous one, so an instance takes at most 2 MiB however long it crash
// loops. Root's hooks and probe write the logs ([Logs.AppendGroup]); bm2
// status and the endings of serve and start read them back
// ([Logs.LastLines], [Logs.Last]). A line that cannot be written (a full
// /var/log) is an error naming the log, whose errno the writer says in a
// state_write_failed event (package journal) before it goes on.
package crashlog
