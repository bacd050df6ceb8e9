// Package jobs is the sequences of systemd jobs bm2 runs on a project's
// units, in the order that keeps them from reacting to each other: a
// stop takes the reusePort probes first ([Stop]), a start takes the
// probes that judged a previous run out of its way ([StopIdleProbes]), a
// deletion stops what the project's timers start ([StopTimed]) and resets
// what systemd keeps of it afterwards ([ResetLeft]); and the reads these
// and serve need: which instance and probe units systemd has
// ([Instances], [Probes]), and a project's units before serve changes
// them ([Before]).
//
// It is plain functions over the few calls of systemd's D-Bus API they
// use ([Systemd], which package control's Systemd and *sysd.Conn
// satisfy); it decides nothing and says nothing to the user.
package jobs
