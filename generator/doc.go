// Package generator turns bm2 project files into systemd units.
//
// The heart is [Generate], a pure function from the project files found along
// the search path to the files a systemd generator writes, plus diagnostics:
// no I/O, no clock, no map iteration, so the same input always yields the
// same bytes. For every valid project it produces
//
//	bm2-<name>.slice                            the project's slice (under bm2.slice)
//	bm2-<name>.target                           wants every instance
//	multi-user.target.wants/bm2-<name>.target   symlink: the project starts at boot
//	bm2@<name>-<i>.service.d/50-bm2.conf        instance i's settings for the shipped template
//
// and for a project with restart_schedule
//
//	bm2-<name>-restart.timer                    OnCalendar= the schedule, PartOf= the target
//	bm2-<name>.target.wants/bm2-<name>-restart.timer   symlink: the timer runs while the project does
//	bm2-<name>-restart.service                  `bm2 reload <name>`, which the timer starts
//
// and for a project with health_path
//
//	bm2-<name>-health.timer                     every health_interval_ms, PartOf= the target
//	bm2-<name>.target.wants/bm2-<name>-health.timer    symlink: the checks run while the project does
//	bm2-<name>-health.service                   `bm2-probe health <name>`, one check of every instance
//
// where every instance's drop-in gets BM2_HEALTH_PORT, the port it
// answers the check on, which the port fence lets it bind.
//
// A cluster-mode instance of system scope (the surge too) gets the drain
// of its port's kernel-steered turn, `ExecStop=+bm2-probe steer drain %i`
// with BM2_DRAIN_MS (drain_ms), unless stop_timeout_ms leaves it no time
// (config.DrainMargin).
//
// A project file that does not parse, or whose port range overlaps a project
// whose name sorts before it, is skipped with a diagnostic; every other
// project is still generated.
//
// [Run] is the thin edge that systemd calls (see systemd.generator(7)): it
// reads the search path, resolves the projects as Generate does, renders and
// writes each project's files into the generator directory (which systemd
// empties before each run: each file is created in place, see [Write]) and
// logs diagnostics to /dev/kmsg as "bm2: ..." so
// that `journalctl -t bm2` shows them. It exits non-zero when any project
// was skipped.
package generator
