// Package view is bm2's read model: what bm2 list, bm2 status, bm2 top
// and bm2 metrics show of the registered projects at one moment, and the
// words they show it in. A [Snapshot] is read once ([Read]: systemd's view
// of every instance, bm2's errored marks, the health checks' state files
// and the reusePort probe's verdicts in the journal), its [Figures] with
// it or after ([ReadFigures]: the kernel's sockets); everything else here
// is a pure function of them, so that a table, a scrape and the live view
// are functions of one Snapshot and cannot disagree.
//
// Instance states are systemd's own, translated by [InstanceState]
// (active/running is online, activating/auto-restart is waiting restart,
// failed is errored with the service's Result as reason); [Snapshot.Instance]
// lays bm2's errored marks, the probe's verdict ([ReuseportVerdict]) and
// the health check's word ([HealthOf]) over them.
//
// The package reads the host only through what [Read] is given: a [Host]
// (the scope's marks, state files and journal), systemd's [Units] and the
// kernel's [Sockets]. Package control gives it the scope's.
//
// A [Reader] is what the commands that show the host read it through:
// the projects on the search path, a Snapshot over a connection to
// systemd ([Conn]), the scope's journal. Its [Reader.Select] and
// [Reader.Snapshot] are bm2 list's and bm2 metrics' reading; a [Feed]
// is bm2 top's, again and again over one connection. Package cli fills
// the Reader from package control's client.
package view
