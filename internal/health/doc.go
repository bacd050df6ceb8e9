// Package health is the HTTP health check of a project's instances
// (health_path in bm2.toml(5)): what one check finds, how a run of checks
// turns into counts and verdicts, and the state file that keeps them
// between runs, which bm2 list reads.
//
// A run is one start of bm2-<name>-health.service (`bm2-probe health
// <name>`: [Checker.Run]), by its timer every health_interval_ms or by bm2
// serve, start and reload waiting for a first healthy answer. It reads
// the project's instances from systemd (each one's InvocationID, UID, GID
// and BM2_HEALTH_PORT; the check's settings from its own service), and
// has three parts, of which only the middle one decides anything:
//
//  1. The GETs, made by a child process running as the instances' own
//     user (never with root's network identity; [ChildCheck] starts
//     `bm2-probe health-get`, [Child], with no supplementary group, an
//     empty environment, its output capped): [Get] asks
//     http://127.0.0.1:PORT/PATH (and [::1] when 127.0.0.1 refuses), waits
//     at most health_timeout_ms for the status line, follows no redirect,
//     and the child prints one line per instance, [FormatLine]. Its
//     output is untrusted (the app's user can ptrace it): the root parent
//     reads it with [ParseOutput], which is strict and bounded and takes
//     nothing for an instance it did not ask about. Output it refuses
//     fails every instance of the run; a check that could not be made at
//     all (the child did not start) counts for nothing and fails the
//     run, so that a broken host is not taken for broken apps.
//  2. [Step], a pure function of the previous [State], what systemd says
//     runs now ([Run]: each instance's InvocationID and when it started),
//     the results and the clock: it returns the new state and the
//     instances to restart. Counts are kept per run of an instance, by
//     InvocationID: a new run starts at 0, as [Starting]. A 2xx or 3xx
//     answer is healthy and clears the count; any other status, a timeout,
//     a refused or broken connection is a failure. A run that has not
//     answered healthy yet is starting, not failing, for [StartGrace]
//     from its start (an app that warms up, or has not listened yet), and
//     then counts like any other. A failure counts toward
//     health_failures only when the one counted before it is at least
//     3/4 of health_interval_ms older, so that the extra runs of a
//     waiting bm2 serve cannot make the count go faster than the timer.
//     When the count reaches health_failures the instance is to be
//     restarted, and its count starts again.
//  3. The edge writes the state back (root's, 0644, package safefs), and
//     for each instance whose run reached health_failures, still the same
//     run, logs instance_unhealthy with the last result, writes a
//     crash.log line and restarts that instance alone over D-Bus, which
//     the restart budget counts as it counts every start.
//
// The state file ([Path]: <dir>/state in the service's RuntimeDirectory,
// /run/bm2/health/<name>) is JSON, one entry per running instance: its
// InvocationID, [Status], the count, the last result and when the
// instance last answered. [Read] takes it back for bm2 list and the wait
// of bm2 serve, which trust it as root's own file and read no more of it
// than [MaxStateSize].
package health
