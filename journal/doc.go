// Package journal owns bm2's event schema and is bm2's way to journald:
// it writes bm2's events there and reads them back through journalctl.
//
// Events (reuseport_confirmed, reuseport_missing, instance_crashed, …) go to
// journald with SYSLOG_IDENTIFIER=bm2, so `journalctl -t bm2` lists them,
// and with structured fields for scripts:
//
//	BM2_EVENT=reuseport_missing BM2_PROJECT=api BM2_INSTANCE=api-0
//	BM2_REASON=reuseport_missing MESSAGE_ID=<stable per event> PRIORITY=3
//
// The field names and the [Kind]s with their MESSAGE_IDs and priorities
// are defined here once (the values of BM2_REASON are package reason's):
// [Fields] gives the fields of an [Event], [Send] writes an entry to
// journald ([Journald] sends events through it), [Decode] reads an event
// back, [Read] runs journalctl for the readers.
//
// Only bm2 speaks for bm2. Every event is written by one of bm2's root
// processes (the reusePort probe, the exit and failure hooks), so readers
// believe an entry only when journald says root sent it (_UID=0, which a
// sender cannot set), or when it came through the kernel log, which only
// root can write ([Trusted]). An app that logs BM2_EVENT=reuseport_confirmed
// under its own user is ignored, by the query and by Decode.
//
// The journal catalog (packaging/catalog/bm2.catalog) has an entry per
// kind; a new kind needs one. A file the root side cannot write is
// state_write_failed, with BM2_PATH and BM2_ERRNO ([WriteFailed],
// [ReportWriteFailure]). Each instance's crash.log is package
// crashlog's.
//
// Notifications of events to a project's webhook are package notify's.
// The events of the hooks that run in an instance's cgroup reach journald
// through package relay, which sends each [EventEntry] as it is, from a
// root unit of its own, so that the app's output, counted against the
// same rate limit, cannot crowd them out.
//
// The generator cannot count on journald (it runs before it may be up): it
// logs through /dev/kmsg, and through [Send] only where there is no
// /dev/kmsg; see package generator.
package journal
