package explain

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

// nodeMissingConfig is what Node.js 24 writes when require("./config.json")
// finds no file, a line an entry.
var nodeMissingConfig = []string{
	"node:internal/modules/cjs/loader:1568",
	"  throw err;",
	"  ^",
	"",
	"Error: Cannot find module './config.json'",
	"Require stack:",
	"- /srv/cfg/server.js",
	"    at Module._resolveFilename (node:internal/modules/cjs/loader:1564:15)",
	"    at wrapResolveFilename (node:internal/modules/cjs/loader:1118:27)",
	"    at defaultResolveImplForCJSLoading (node:internal/modules/cjs/loader:1142:10)",
	"    at resolveForCJSWithHooks (node:internal/modules/cjs/loader:1169:12)",
	"    at Module._load (node:internal/modules/cjs/loader:1341:5)",
	"    at wrapModuleLoad (node:internal/modules/cjs/loader:261:19)",
	"    at Module.require (node:internal/modules/cjs/loader:1674:12)",
	"    at require (node:internal/modules/helpers:157:16)",
	"    at Object.<anonymous> (/srv/cfg/server.js:1:13)",
	"    at Module._compile (node:internal/modules/cjs/loader:1929:14) {",
	"  code: 'MODULE_NOT_FOUND',",
	"  requireStack: [ '/srv/cfg/server.js' ]",
	"}",
	"",
	"Node.js v24.22.3",
}

// runEntries are a run's journal entries as journald keeps them: the
// app's lines, its last ones without their unit and invocation (lost as
// the process exited), and around them what the run must not show.
func runEntries(t0 time.Time, lines []string, lost int) []journal.Entry {
	const unit, inv = "bm2@cfg-0.service", "de7ffaf2d0614019af984aeb2c98c4ad"
	at := func(k int) string { return fmt.Sprint(t0.Add(time.Duration(k) * time.Millisecond).UnixMicro()) }
	es := []journal.Entry{
		{"__REALTIME_TIMESTAMP": at(0), "_PID": "1", "_UID": "0", "_TRANSPORT": "journal", "UNIT": unit, "INVOCATION_ID": inv,
			"_SYSTEMD_UNIT": "init.scope", "MESSAGE": "Started bm2@cfg-0.service - bm2 cfg instance 0.", "PRIORITY": "6"},
		// The port fence, root's, in the unit.
		{"__REALTIME_TIMESTAMP": at(1), "_PID": "1100", "_UID": "0", "_TRANSPORT": "stdout", "_SYSTEMD_UNIT": unit,
			"_SYSTEMD_INVOCATION_ID": inv, "MESSAGE": "error: fence said something", "PRIORITY": "6"},
	}
	for k, l := range lines {
		e := journal.Entry{"__REALTIME_TIMESTAMP": at(10 + k), "_PID": "1107", "_UID": "61595", "_TRANSPORT": "stdout",
			"SYSLOG_IDENTIFIER": "cfg-0", "MESSAGE": l, "PRIORITY": "6"}
		if k < len(lines)-lost {
			e["_SYSTEMD_UNIT"], e["_SYSTEMD_INVOCATION_ID"] = unit, inv
		}
		es = append(es, e)
	}
	return append(es,
		journal.Entry{"__REALTIME_TIMESTAMP": at(100), "_PID": "1", "_UID": "0", "_TRANSPORT": "journal", "UNIT": unit,
			"_SYSTEMD_UNIT": "init.scope", "MESSAGE": "bm2@cfg-0.service: Main process exited, code=exited, status=1/FAILURE", "PRIORITY": "5"},
		// bm2's exit hook, about the run.
		journal.Entry{"__REALTIME_TIMESTAMP": at(101), "_PID": "1200", "_UID": "0", "_TRANSPORT": "journal", "SYSLOG_IDENTIFIER": "bm2",
			"_SYSTEMD_UNIT": unit, "_SYSTEMD_INVOCATION_ID": inv, "BM2_EVENT": "instance_crashed", "MESSAGE": "cfg-0 exited with status 1", "PRIORITY": "3"},
		// The same PID, later, in another unit: another process.
		journal.Entry{"__REALTIME_TIMESTAMP": at(200), "_PID": "1107", "_UID": "0", "_TRANSPORT": "stdout", "_SYSTEMD_UNIT": "cron.service",
			"MESSAGE": "Error: not ours", "PRIORITY": "6"},
	)
}

func TestRunLogFromFirstError(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	u := view.UnitStatus{InvocationID: "de7ffaf2d0614019af984aeb2c98c4ad", ExecMainPID: 1107, ExecMainStart: t0, ExecMainCode: 1, ExecMainStatus: 1}
	for _, lost := range []int{0, 16} {
		r := RunLogOf(runEntries(t0, nodeMissingConfig, lost), "bm2@cfg-0.service", u, "0", false)
		if len(r.Lines) != len(nodeMissingConfig) {
			t.Fatalf("lost %d: %d lines, want the app's %d:\n%s", lost, len(r.Lines), len(nodeMissingConfig), strings.Join(r.Lines, "\n"))
		}
		if got := r.FirstError(); got != "Error: Cannot find module './config.json'" {
			t.Errorf("lost %d: first error %q", lost, got)
		}
		r.Whole = "journalctl _SYSTEMD_INVOCATION_ID=de7ffaf2d0614019af984aeb2c98c4ad"
		want := `
its last run's output, from its first error (journalctl _SYSTEMD_INVOCATION_ID=de7ffaf2d0614019af984aeb2c98c4ad shows all of it):
  Error: Cannot find module './config.json'
  Require stack:
  - /srv/cfg/server.js
      at Module._resolveFilename (node:internal/modules/cjs/loader:1564:15)
      at wrapResolveFilename (node:internal/modules/cjs/loader:1118:27)
      at defaultResolveImplForCJSLoading (node:internal/modules/cjs/loader:1142:10)
      at resolveForCJSWithHooks (node:internal/modules/cjs/loader:1169:12)
      at Module._load (node:internal/modules/cjs/loader:1341:5)
      at wrapModuleLoad (node:internal/modules/cjs/loader:261:19)
      at Module.require (node:internal/modules/cjs/loader:1674:12)
      at require (node:internal/modules/helpers:157:16)
      at Object.<anonymous> (/srv/cfg/server.js:1:13)
  (6 more lines)`
		if got := r.Text(); got != want {
			t.Errorf("lost %d: text:\n%s\nwant:\n%s", lost, got, want)
		}
		if got := ExitWords(u, r); got != "exit status 1: Error: Cannot find module './config.json'" {
			t.Errorf("exit words %q", got)
		}
	}
}

func TestRunLogErrorCues(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	u := view.UnitStatus{InvocationID: "ab", ExecMainPID: 1107, ExecMainStart: t0}
	for _, c := range []struct {
		lines []string
		first string
	}{
		// Bun.
		{[]string{"1 | const c = require(\"./config.json\");", "              ^", `error: Cannot find module "./config.json" from "/srv/a/index.ts"`, "", "Bun v1.4.4 (Linux x64)"},
			`error: Cannot find module "./config.json" from "/srv/a/index.ts"`},
		// A syntax error: the line that names it, not the source quoted before.
		{[]string{"/srv/a/server.js:3", "  foo(;", "      ^", "", "SyntaxError: Unexpected token ';'", "    at wrapSafe (node:internal/modules/cjs/loader:1486:18)"},
			"SyntaxError: Unexpected token ';'"},
		{[]string{"listening", "Uncaught TypeError: x is not a function"}, "Uncaught TypeError: x is not a function"},
		{[]string{"Error [ERR_REQUIRE_ESM]: require() of ES Module /srv/a/m.js not supported."}, "Error [ERR_REQUIRE_ESM]: require() of ES Module /srv/a/m.js not supported."},
		// Only weak cues: the first of them.
		{[]string{"starting", "  throw new Error(oops)", "bye"}, "throw new Error(oops)"},
		// No cue: none is made up.
		{[]string{"starting", "bye"}, ""},
		// A line that mentions errors is not one.
		{[]string{"0 errors, 3 warnings", "errorCount: 0"}, ""},
	} {
		r := RunLogOf(runEntries(t0, c.lines, 0), "bm2@cfg-0.service", view.UnitStatus{InvocationID: "de7ffaf2d0614019af984aeb2c98c4ad", ExecMainPID: u.ExecMainPID, ExecMainStart: t0}, "0", false)
		if got := r.FirstError(); got != c.first {
			t.Errorf("%q: first error %q, want %q", c.lines, got, c.first)
		}
	}

	// systemd's words from a process it could not start: the run's
	// main process, at priority err.
	spawn := []journal.Entry{
		{"__REALTIME_TIMESTAMP": fmt.Sprint(t0.UnixMicro()), "_PID": "1107", "_UID": "0", "_TRANSPORT": "journal", "_SYSTEMD_UNIT": "bm2@ali-0.service",
			"_SYSTEMD_INVOCATION_ID": "ab", "SYSLOG_IDENTIFIER": "(m2-probe)", "PRIORITY": "3",
			"MESSAGE": "bm2@ali-0.service: Failed to set up special execution directory in /run: No such file or directory"},
		{"__REALTIME_TIMESTAMP": fmt.Sprint(t0.UnixMicro() + 1), "_PID": "1107", "_UID": "0", "_TRANSPORT": "journal", "_SYSTEMD_UNIT": "bm2@ali-0.service",
			"_SYSTEMD_INVOCATION_ID": "ab", "SYSLOG_IDENTIFIER": "(m2-probe)", "PRIORITY": "3",
			"MESSAGE": "bm2@ali-0.service: Failed at step RUNTIME_DIRECTORY spawning /usr/lib/bm2/bm2-probe: No such file or directory"},
	}
	u.ExecMainCode, u.ExecMainStatus = 1, 233
	r := RunLogOf(spawn, "bm2@ali-0.service", u, "0", false)
	if got := ExitWords(u, r); got != "exit status 233/RUNTIME_DIRECTORY: bm2@ali-0.service: Failed to set up special execution directory in /run: No such file or directory" {
		t.Errorf("spawn failure: %q", got)
	}

	// An app's own priority counts only where it asked for it.
	prio := runEntries(t0, []string{"<3>db down"}, 0)
	prio[2]["PRIORITY"], prio[2]["MESSAGE"] = "3", "db down" // after the manager's line and the fence's
	if got := RunLogOf(prio, "bm2@cfg-0.service", view.UnitStatus{InvocationID: "de7ffaf2d0614019af984aeb2c98c4ad"}, "0", false).FirstError(); got != "" {
		t.Errorf("an app's <3> without log_level_prefix: %q", got)
	}
	if got := RunLogOf(prio, "bm2@cfg-0.service", view.UnitStatus{InvocationID: "de7ffaf2d0614019af984aeb2c98c4ad"}, "0", true).FirstError(); got != "db down" {
		t.Errorf("an app's <3> with log_level_prefix: %q", got)
	}

	// The app's words are escaped and cut where they become a reason's.
	r = RunLogOf(runEntries(t0, []string{"Error: \x1b[2J" + strings.Repeat("x", 400)}, 0), "bm2@cfg-0.service",
		view.UnitStatus{InvocationID: "de7ffaf2d0614019af984aeb2c98c4ad", ExecMainCode: 1, ExecMainStatus: 1}, "0", false)
	if w := ExitWords(view.UnitStatus{ExecMainCode: 1, ExecMainStatus: 1}, r); strings.Contains(w, "\x1b") || len(w) > 260 {
		t.Errorf("exit words not escaped and cut: %q", w)
	}
	if strings.Contains(r.Text(), "\x1b") {
		t.Errorf("text not escaped: %q", r.Text())
	}
}

func TestRunQuery(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	q, ok := RunQuery(view.UnitStatus{InvocationID: "ab", ExecMainPID: 1107, ExecMainStart: t0})
	if want := "--no-pager -o json --since @1777636799.000000 -n 200 _SYSTEMD_INVOCATION_ID=ab + _PID=1107"; !ok || strings.Join(q.Args(), " ") != want {
		t.Errorf("query %v:\n got %s\nwant %s", ok, strings.Join(q.Args(), " "), want)
	}
	if _, ok := RunQuery(view.UnitStatus{}); ok {
		t.Error("a run without invocation or PID has a query")
	}
}
