// Package state keeps what bm2 knows that systemd's own state cannot hold:
// which projects are errored and why.
//
// A project is errored when bm2 stopped it on purpose (the reusePort probe
// found an exclusive listener). The mark is a file,
// /var/lib/bm2/errored/<project>, whose content is the reason
// (e.g. "reuseport_missing"). Every generated instance carries
// ConditionPathExists=!/var/lib/bm2/errored/<project>, so an errored project
// stays down across daemon-reload and reboot, without the generator having
// to read /var (which may not be mounted when generators run). `bm2 serve`
// and `bm2 start` clear the mark.
package state
