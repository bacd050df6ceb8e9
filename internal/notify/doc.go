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
// directory is not empty; it posts every spooled notification on its own,
// each attempt within 3 s, 5 attempts with 1, 2, 4 and 8 s between them,
// removes the file once delivered or given up (a line in its journal, URL
// redacted, says so), and exits when the spool is empty. A receiver that
// hangs costs its own notification 31 s at most, and nothing else. A
// notification given up is also an event of its project,
// notification_dropped, which is never notified itself.
//
// Projects share nothing: each has its own share of the spool (the file
// name says whose: TIME-PROJECT-RANDOM.json), at most [MaxPerProject]
// notifications, beyond which its own oldest are dropped, with a line
// saying so; and its own delivery slots (Policy.Concurrency), which a
// notification waiting to be tried again does not hold.
//
// bm2-notify connects only where [CheckTarget] allows, checked on each
// address a connection dials (a net.Dialer Control, after DNS and on every
// redirect), without a proxy: never link-local (the metadata service
// 169.254.169.254), multicast or unspecified addresses, and this host
// itself only for a notification that allows it (Notification.AllowLocal,
// from notify.allow_local in a project file root owns, or in user scope
// the user): a loopback address, or any address the kernel delivers
// locally ([Local]: every address of every interface, asked of the
// kernel's routes at each dial), which reaches what listens on the host
// as loopback does.
//
// A notification is posted as JSON to the webhook ([Webhook], one attempt
// per [Webhook.Post]; the body is [Payload], documented in bm2.toml(5));
// its URL is printed only through [RedactURL].
//
// The spool's directory is the scope's (layout.Layout.NotifyDir); the units
// that deliver it are [PathUnit] and [ServiceUnit] in either manager.
package notify
