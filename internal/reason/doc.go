// Package reason names why a project or an instance failed, and says what
// to do about it: every [Reason] bm2 records (the BM2_REASON of an event,
// the reason= of a crash.log line, an errored mark) and bm2's one table of
// failure modes, the one line per reason that says what broke, the fix to
// type next and the man page section to read.
//
// Every place that tells an operator why something failed words it from
// here: the endings of bm2 serve, start, restart and reload, bm2 status
// NAME and bm2 check. docs/troubleshooting.md is this table
// rendered ([Markdown]); a test keeps the two in step.
//
// A mode's text is a template: {project}, {instance}, {port} and {detail}
// (what was found: the listener's address, the process holding the port,
// the refusal's words, how the last run ended and the first error it
// logged) are filled in from
// [Facts]. A mode may be worded differently under Bun, whose node:http
// ignores reusePort: the kernel cannot tell such an app from a Bun.serve
// without reusePort, so the Bun wording names both causes and both fixes.
package reason
