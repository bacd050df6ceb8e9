// Package notify delivers bm2's events to a project's webhook, outside the
// units whose work they describe.
//
// Every event of a project at or above its [notify] level is a
// notification. The root process that emits the event ([Sink], around the
// journal) reads the project's webhook and level from the project's own
// file at that moment and writes the notification to a spool directory
// only root can read (a webhook URL often carries a token):
//
//	/var/lib/bm2/notify/00001764595200123456789-3f2a9c1e.json   0600 root
//	{"url":"https://hooks.example.com/bm2?token=…","payload":{"event":"instance_errored",…}}
//
// Writing a file takes a millisecond, so the exit hook (ExecStopPost=) and
// the probe's reaction never wait for a receiver. bm2-notify.path starts
// bm2-notify.service (`bm2-probe notify`, [Deliver]) whenever the
// directory is not empty; it posts every spooled notification
// concurrently, each attempt within 3 s, 5 attempts with 1, 2, 4 and 8 s
// between them, removes the file once delivered or given up (a line in its
// journal, URL redacted, says so), and exits when the spool is empty. A
// receiver that hangs costs its own notification 31 s at most, and nothing
// else. A notification given up is also an event of its project,
// notification_dropped, which is never notified itself. The spool keeps at most [MaxSpooled] notifications: beyond that
// the oldest are dropped, with a line saying so.
//
// The spool's directory and the unit names are a [Scope]: [System] is the
// system's.
package notify
