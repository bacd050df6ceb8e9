package control

import "time"

// Figures are what the kernel and the probe's events say of each instance
// of a [Snapshot], beyond its unit's status: what bm2 metrics and bm2 top
// show next to state, memory and CPU. Reading them ([Client.Figures]) is
// I/O; rendering them is a pure function of a Snapshot and its Figures.
type Figures struct {
	// Projects holds one entry per Snapshot.Projects, in order, and
	// within it one InstanceFigures per ProjectSnapshot.IDs, in order
	// (nil for a project that is invalid or whose states are unknown).
	Projects [][]InstanceFigures
	// Warnings say what could not be read, one line each.
	Warnings []string
}

// InstanceFigures are one instance's figures. A figure that could not be
// read is -1 (counts) or 0 (durations): unknown, never a made-up zero.
type InstanceFigures struct {
	// Connections is how many established TCP connections the instance's
	// processes hold on its port.
	Connections int
	// AcceptQueued and AcceptLimit are its listener's accept queue: the
	// connections the kernel completed that the app has not accepted yet,
	// and the backlog the app asked for (capped by net.core.somaxconn).
	AcceptQueued, AcceptLimit int
	// ConfirmLatency is, in cluster mode, the time from the start of the
	// instance's current run to the probe's reuseport_confirmed event.
	ConfirmLatency time.Duration
}

// UnknownFigures are the figures of an instance nothing could be read of.
var UnknownFigures = InstanceFigures{Connections: -1, AcceptQueued: -1, AcceptLimit: -1}
