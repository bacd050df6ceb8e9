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
//	bm2 start / stop / restart / status / delete
//	bm2 reload   a rolling restart: one instance at a time, each back before the next
//	bm2 logs     the app's output: journalctl -u bm2@<name>-<i>.service, prefixed
//	bm2 events   bm2's own events: journalctl -t bm2, as a table or JSON lines
//	bm2 completion bash|zsh|fish   the shell completion script (internal/cli/completion/)
//
// The completion scripts are thin: they call the hidden `bm2 __complete --
// WORD...`, which completes commands, flags, project and instance names in
// Go. What each argument takes is read from the command's usage line in
// help.txt ("<name | name-i>": projects and instances), so --help, bm2(1)
// and completion cannot disagree.
//
// # Shape
//
// [Main] and [Run] are what cmd/bm2 calls; [App] holds the streams
// ([Stdio]) and an [Env] of everything that touches the host: the config
// and state directories (the scope's layout), the environment, systemd ([Systemd],
// reached through [ConnectSystemd]), the journal, the port probe and the
// runtime lookup. Every field has a production default, and tests replace
// them one by one: nothing in the package is global or mutable.
//
// All output goes to the App's writers: reports and progress to Out,
// warnings and errors to Err. An error returned by Run is printed by Main
// as "bm2: <error>" lines followed by a hint of what to do next, and mapped
// to an exit code by [ExitCode]: 0 ok, 1 failure, 2 usage, 3 invalid
// project file or a problem found by check, 4 no such project, 5 systemd
// not reachable.
//
// # Talking to systemd
//
// [Systemd] is the handful of D-Bus calls bm2 needs: daemon-reload, jobs
// that are waited for (start, stop, restart in "replace" mode), reset-failed,
// and unit properties (InvocationID included: it names one run of an
// instance). Instance states are systemd's own, translated by
// [control.InstanceState] (active/running is online, activating/auto-restart is
// waiting restart, failed is errored with the service's Result as reason,
// start-limit-hit reading restart_budget_exhausted). The one state systemd
// cannot hold, a project bm2 stopped on purpose, is the errored mark of
// package state, which overrides whatever systemd says.
//
// # The journal and the reusePort probe
//
// bm2 reads the journal only through journalctl (-o json), which is what
// operators trust and what knows the journal's access rules: [JournalQuery]
// and [Env.ReadJournal]. In cluster mode, serve, start, restart and reload
// wait for the reusePort probe's verdict on each instance's current run: a
// reuseport_confirmed event for the instance logged since the run came
// online (or, when events carry BM2_INVOCATION, naming the run's
// InvocationID). reuseport_missing shows as the project's errored mark,
// which the probe writes before it logs. bm2 list shows the verdict in its
// REUSEPORT column.
//
// As the probe judges the port group, not the instance (the group stays
// joinable while any instance listens), reload also checks that a
// restarted instance's own process listens on its port again (from /proc:
// [Env.Listening]) before it restarts the next one.
//
// # Why something failed
//
// Every ending of serve, start, restart and reload that reports a failed
// project or instance, bm2 status NAME and bm2 check word it from package
// failure's table (reasons.go): the errored mark and the event that set it
// (reuseport_missing, loopback_only, port_in_use), the exit hook's
// runtime_rejected event for a refusal (exit status 78), systemd's own
// cannot-start statuses (200: cwd_missing, 217: user_missing), and for a
// crash loop the last crash.log line, or the missing script or directory
// that caused it. What can be known before start (a missing user, working
// directory, script or env_file, as the project's user) is checked by
// check, by status and by serve, which refuses what no start could get
// past before anything changes.
package cli
