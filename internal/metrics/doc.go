// Package metrics is bm2 metrics: what bm2 knows of every instance, in the
// Prometheus text exposition format, with no daemon.
//
// A Prometheus server scrapes bm2 the way it scrapes anything: over HTTP.
// But bm2 has no process of its own between commands, and keeps it so. A
// socket unit with Accept=yes runs `bm2 metrics --http` once per
// connection, with the connection as its standard input and output; it
// reads one request, answers it and exits (package cli). Each scrape is
// then one bm2 list: a [view.Snapshot] of systemd's units, errored marks
// and probe verdicts, and the [view.Figures] the kernel gives of each
// instance's sockets.
//
// This package is the pure part: [Families] turns a Snapshot, its Figures
// and the build's version into metric families, and [Write] writes them.
// The families are made the way client_golang wants a collector of other
// state to make them: a [prometheus.Collector] emitting constant metrics,
// gathered by a pedantic registry, which checks every series against its
// description and refuses a duplicate. The registry sorts families by
// name and series by their labels, so the same state is the same bytes.
//
// Every instance series has the labels project, instance (its id as bm2
// list shows it: "api-0", the surge "api-surge") and mode. Two are state
// sets: bm2_instance_state has one series per state word of bm2 list,
// the current one 1, and bm2_instance_reuseport one per verdict of the
// reusePort probe, for an online cluster-mode instance whose verdict bm2
// list would show. What bm2 cannot know (memory systemd does not account,
// sockets of another user's processes) is left out, never written as 0:
// a missing series is an unknown, a 0 is a fact.
package metrics
