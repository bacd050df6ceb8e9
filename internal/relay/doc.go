// Package relay sends the events of bm2's hooks that run inside an
// instance's cgroup to journald from outside it, so that an app that
// floods its output cannot crowd them out.
//
// journald counts what each unit logs against that unit's rate limit
// (LogRateLimitBurst=, LogRateLimitIntervalSec=, per group of priorities),
// and it files a message under the unit whose cgroup its sender is in.
// The exit hook (`bm2-probe exited`, ExecStopPost=+) and the port fence
// (`bm2-probe fence`, ExecStartPre=+) run in the instance's cgroup: what
// they sent directly went into the app's own bucket, and an app that
// prints 200,000 lines a second had bm2's instance_crashed dropped with
// its own lines. bm2 reads its state back from those events (package
// journal), so they must not be lost.
//
// [Sink] writes each event instead as one file into a spool directory on
// tmpfs, the scope's alone (layout.Layout.EventsDir: /run/bm2/events, 0700
// root; a user's $XDG_RUNTIME_DIR/bm2/events), through safefs.Write:
//
//	/run/bm2/events/00000000012345678901-0000004242-0000000001.json   0600 root
//	{"BM2_EVENT":"instance_crashed","BM2_INSTANCE":"api-0",…,"MESSAGE":"api-0 exited with status 1 (exit-code)",
//	 "OBJECT_SYSTEMD_UNIT":"bm2@api-0.service","PRIORITY":"4","SYSLOG_IDENTIFIER":"bm2"}
//
// The file holds the event's entry exactly as journal.Journald would have
// sent it (journal.EventEntry; a value that is not UTF-8 as an array of
// its bytes, as journalctl -o json writes it), and one field more: the
// instance's unit as OBJECT_SYSTEMD_UNIT (user scope:
// OBJECT_SYSTEMD_USER_UNIT), which journalctl -u (--user-unit) matches in
// root's (the user's) entries, so that `journalctl -u bm2@api-0`, `systemctl
// status` and `bm2 logs` show the event where they showed it before. Its
// name sorts in the order of emission: the time since boot in
// nanoseconds, the writer's pid, and a count of the writer's own events.
//
// [Drainer] sends them: every reusePort probe as it starts and whenever a
// run it judges ends (`bm2-probe PROJECT-INDEX`, [ProbeUnit], beside its
// instance: a crash is sent as the probe sees the run end, or as the next
// run's probe starts), the failure
// hook of an instance that gives up (`bm2-probe failed`, before it
// records that), and [ServiceUnit], `bm2-probe events`, which [TimerUnit]
// starts every half minute while anything waits
// (ConditionDirectoryNotEmpty=: an empty spool costs no process), for
// what neither sent. Each runs in a cgroup of its own, whose rate limit no
// app fills; the service's is lifted (LogRateLimitBurst=). A drain takes
// the spool directory's flock, reads every file in name order, sends its
// entry through the journal package, removes it, and ends once the spool
// is empty. Nothing on a restart's path starts a unit for an event: the
// path unit that used to start the service at each event cost every crash
// recovery some 30 ms of PID 1's and the CPUs' time, while the restart
// waited. It refuses (says so on its log, and removes) anything that is
// not an event bm2 wrote: a file that is not regular (a link, a FIFO, a
// directory), not the spool owner's, larger than [MaxFileSize], not a
// JSON object of strings, or whose fields are not an event's
// (journal.EventFields and the one OBJECT_ field of the event's own
// instance: no _UID, _PID or any field journald sets, SYSLOG_IDENTIFIER
// bm2, a PRIORITY of 0 to 7, a kind bm2 emits). An event reaches the
// journal as the probe sees the run end (or within half a minute);
// nothing of bm2 waits for it synchronously (see package control's wait).
// The spool is on tmpfs: what waits in it when the host goes down is lost.
//
// [Verdicts] are the probe's own: its latest verdict on each instance, in
// a file of the same format beside the journal, for the waits of serve,
// start and reload.
//
// No event is left out by the relay: the sink sends one directly to
// journald, as before, when the spool does not exist (no probe has run
// since boot, and tmpfiles.d did not make it), is not a directory of the
// owner's alone, already holds [MaxFiles] events or [MaxBytes], has held
// its oldest for [StaleAfter]
// (nothing drains it), when the event is too large for it, or when the
// write fails (then with a state_write_failed event too). Only the exit
// hook and the fence relay their events; the probe, the failure hook and
// the health check run in units of their own, whose buckets no app fills,
// and send directly.
//
// In user scope journald files every unit of a user's manager under
// user@UID.service, whose one rate limit the user's apps and the relay
// share, and it reads no LogRateLimit… of a user's units: there the relay
// keeps the order and the fallback, but cannot lift the limit.
package relay
