// Package cli is the bm2 command.
//
// bm2 has no daemon. Projects are files (/etc/bm2/<name>.toml, see package
// config); bm2-generator turns them into systemd units at every
// daemon-reload (see package generator); systemd starts, supervises and
// restarts the instances. This package is the friendly face over that
// arrangement, and everything it does is something a person could do by
// hand with an editor, systemctl and journalctl:
//
//	bm2 check    validate a project file, probe its ports, find its runtime (no root, no systemd)
//	bm2 serve    write /etc/bm2/<name>.toml from a project dir's bm2.toml, daemon-reload, start
//	bm2 list     one row per instance, from systemd's unit properties over D-Bus
//	bm2 top      the same, live: package top's view, read every second (top.go)
//	bm2 start / stop / restart / status / delete
//	bm2 reload   a rolling restart: one instance at a time, each back before the next
//	bm2 logs     the app's output: journalctl -u bm2@<name>-<i>.service, prefixed, or JSON lines; --grep
//	bm2 events   bm2's own events: journalctl -t bm2, as a table or JSON lines
//	bm2 metrics  what bm2 list reads, and the kernel's count of each instance's sockets, for Prometheus;
//	             --http answers one scrape on a connection a socket unit (Accept=yes) hands over
//	bm2 completion bash|zsh|fish   the shell completion script (internal/cli/completion/)
//
// The completion scripts are thin: they call the hidden `bm2 __complete --
// WORD...`, which completes commands, flags, project and instance names in
// Go (package complete). What each argument takes is read from the
// command's usage line in help.txt ("<name | name-i>": projects and
// instances), so --help, bm2(1) and completion cannot disagree.
//
// # Shape
//
// [Main] and [Run] are what cmd/bm2 calls. [App] is the command line over
// a [control.Client] it holds (a.c): this package parses flags, prints
// help and completions, dispatches, maps errors to exit codes and hints
// (control fails with a [control.Error] of a class; the numbers are
// this package's), and renders what control reads (bm2 list's rows are
// a pure function of a [view.Snapshot]; see view.Rows) and what it
// reports as a command goes (render, its [control.Reporter]). It reaches
// the host only through the client, whose [control.Env] tests replace
// field by field; bm2 list, top, metrics, logs and events read it
// through a [view.Reader] made of the client (reader.go).
//
// All output goes to the App's writers: reports and progress to Out,
// warnings and errors to Err. An error returned by Run is printed by Main
// as "bm2: <error>" lines followed by a hint of what to do next, and mapped
// to an exit code by [ExitCode]: 0 ok, 1 failure, 2 usage, 3 invalid
// project file or a problem found by check, 4 no such project, 5 systemd
// not reachable.
package cli
