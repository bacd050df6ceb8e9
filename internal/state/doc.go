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
// When that mark cannot be written (/var full, ENOSPC; mounted read-only,
// EROFS; a failing disk, EIO; any error), it is written under the run
// directory instead: /run/bm2/errored-projects/<project> (user scope:
// $XDG_RUNTIME_DIR/bm2/errored-projects/...), a directory of its own, so
// that no project is taken for an instance's mark. [Dir.Errored] reports
// a project errored by either mark, and [Dir.ClearErrored] removes both.
// The project is then errored until the next boot, not across a reboot,
// and that is the right fallback. The probe that marks a project stops
// its units itself, so nothing needs the mark to bring it down; what the
// mark must still do is keep the first verdict (one reaction, one event)
// and tell bm2 status, bm2 list and the failure hook why the project is
// down, and the run directory does that for the whole boot. The
// generator's ConditionPathExists= names /var/lib/bm2/errored only, and
// is left so: /run is empty at every boot, so a condition on it would
// change nothing then. After a reboot the project starts as it would
// have without the mark; within the boot only a start by hand through
// systemctl, which the mark under /var would have held back, gets past
// it. A mark that cannot be written even there leaves the project
// unmarked, and stopped all the same. Either failure is for the caller to
// say, as a state_write_failed event (package journal): [Dir.SetErrored]
// returns a [*MarkError] saying what was written where.
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
