// Package control is what the bm2 command does to the host: it registers,
// starts, stops, restarts, reloads and deletes projects through systemd,
// and waits until their instances are where the command asked; it reads
// the state that bm2 list and bm2 status show ([Client.Snapshot]) and
// words why something failed. Package cli is its only caller: cli parses
// and renders, control acts. Control writes nothing to the user's streams
// (progress goes to a [Reporter]) and decides no exit code: a failure is
// an [Error] of a class ([Code]) with the fix, and cli maps the class to
// the command's exit code.
//
// [Client] holds the [Reporter] progress goes to and an [Env] of everything
// that touches the host: the scope's layout (package layout), the
// environment, systemd ([Systemd], reached through [ConnectSystemd]), the
// journal, the port probe and the runtime lookup. Every field has a
// production default ([Env.WithDefaults]), and tests replace them one by
// one: nothing in the package is global or mutable.
//
// Changes to the registered projects are serialized by the registry lock
// (lockRegistry), reloads of one project by its reload lock
// ([registry.TryLockProject]): both are package registry's, with what serve
// writes and the rules it must pass. Every wait is package wait's one
// loop over a pure step function (a Waiter's step takes a snapshot of the
// instances and the journal and says what to print, whether it is done,
// and what failed), driven on [Env.Clock]; control gives it the host to
// look at (wait.Scope) and package explain words how a failed wait ended.
//
// # Talking to systemd
//
// [Systemd] is the handful of D-Bus calls bm2 needs: daemon-reload, jobs
// that are waited for (start, stop, restart in "replace" mode), reset-failed,
// and unit properties (InvocationID included: it names one run of an
// instance). Instance states are systemd's own, translated by
// [view.InstanceState] (active/running is online, activating/auto-restart is
// waiting restart, failed is errored with the service's Result as reason,
// start-limit-hit reading restart_budget_exhausted). The one state systemd
// cannot hold, a project bm2 stopped on purpose, is the errored mark of
// package state, which overrides whatever systemd says.
//
// # The journal and the reusePort probe
//
// bm2 reads the journal only through journalctl (-o json), which is what
// operators trust and what knows the journal's access rules: [journal.Query]
// and [Env.ReadJournal]. In cluster mode, serve, start, restart and reload
// wait for the reusePort probe's verdict on each instance's current run: a
// reuseport_confirmed event for the instance logged since the run came
// online (or, when events carry BM2_INVOCATION, naming the run's
// InvocationID). reuseport_missing shows as the project's errored mark,
// which the probe writes before it logs. bm2 list shows the verdict in its
// REUSEPORT column.
//
// The probe also keeps its latest verdict on each instance in a file
// (relay.Verdicts, in the scope's layout.Layout.VerdictDir): a wait
// watches that directory (Env.WatchVerdicts), looks the moment a verdict
// is written, and reads the files at every look; it reads the journal
// only for verdicts no file holds (at most every verdictJournalEvery),
// so a run confirmed in its file costs no journalctl at all.
//
// As the probe judges the port group, not the instance (the group stays
// joinable while any instance listens), reload also checks that a
// restarted instance's own process listens on its port again (from /proc:
// [Env.Listening]) before it restarts the next one.
//
// # The health check
//
// With health_path, online means healthy: once an instance listens (and,
// in cluster mode, is confirmed), the wait starts bm2-<name>-health.service
// itself (at most once a second, waiting for its run) and reads its state
// file (package health) until the entry for the instance's current
// InvocationID says healthy, or the wait's timeout passes. A reload whose
// surge or restarted instance does not turn healthy stops there, through
// the same path as one that does not come back. bm2 list shows the state
// file's word for each run in its HEALTH column ([view.HealthOf]).
//
// # Why something failed
//
// Every ending of serve, start, restart and reload that reports a failed
// project or instance, bm2 status NAME and bm2 check word it from package
// reason's table, through package explain (which reads the scope through
// [Client.Explainer]): the errored mark and the event that set it
// (reuseport_missing, loopback_only, port_in_use), the exit hook's
// runtime_rejected event for a refusal (exit status 78), systemd's own
// cannot-start statuses (200: cwd_missing, 217: user_missing), and for a
// crash loop the last crash.log line, or the missing script or directory
// that caused it. What can be known before start (a missing user, working
// directory, script or env_file, as the project's user) is checked by
// check, by status and by serve, which refuses what no start could get
// past before anything changes.
package control
