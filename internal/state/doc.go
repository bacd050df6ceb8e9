// Package state keeps what bm2 knows that systemd's own state cannot hold:
// which projects and instances are errored and why.
//
// A project is errored when bm2 stopped it on purpose (the reusePort probe
// found an exclusive listener). The mark is a file,
// /var/lib/bm2/errored/<project>, whose content is the reason
// (e.g. "reuseport_missing"). Every generated instance carries
// ConditionPathExists=!/var/lib/bm2/errored/<project>, so an errored project
// stays down across daemon-reload and reboot, without the generator having
// to read /var (which may not be mounted when generators run). `bm2 serve`
// and `bm2 start` clear the mark.
//
// One instance is errored when it cannot listen on its own port because
// a process of another user holds it (port_in_use): any local user can do
// that to any port, so the mark stops that instance only, never its
// neighbours, and lasts one boot: /run/bm2/errored/<project>-<i> (user
// scope: $XDG_RUNTIME_DIR/bm2/errored/...), holding the reason and who
// holds the port. Each instance carries
// ConditionPathExists=!/run/bm2/errored/<project>-<i> as well; `bm2 serve`,
// `bm2 start` and `bm2 restart` of the instance (or of its project) clear
// it.
package state
