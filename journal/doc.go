// Package journal records what bm2 does, where an operator looks for it.
//
// Events (reuseport_confirmed, reuseport_missing, instance_crashed, …) go to
// journald with SYSLOG_IDENTIFIER=bm2, so `journalctl -t bm2` lists them,
// and with structured fields for scripts:
//
//	BM2_EVENT=reuseport_missing BM2_PROJECT=api BM2_INSTANCE=api-0
//	BM2_REASON=reuseport_missing MESSAGE_ID=<stable per event> PRIORITY=3
//
// so `journalctl -t bm2 BM2_PROJECT=api` or `journalctl MESSAGE_ID=…` find
// them. Each instance also has a crash.log, one line per abnormal event with
// the reason first-class:
//
//	/var/log/bm2/api/api-0.crash.log
//	2026-11-30T04:00:00.123Z reason=reuseport_missing detail="…"
//
// The generator cannot use journald (it runs before it may be up) and logs
// through /dev/kmsg instead; see package generator.
package journal
