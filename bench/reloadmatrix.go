package main

import (
	"context"
	"fmt"
)

// matrixCases are the reloadmatrix figure's rows (times each load): a
// project of bm2Projects, what its app does on SIGTERM (apps/app.js's
// SHUTDOWN: "" drains, "close" only server.close(), "none" nothing) and
// net.ipv4.tcp_migrate_req.
var matrixCases = []struct {
	project           string
	shutdown, migrate string
}{
	{"rmatrix", "", "1"},
	{"rmatrix", "", "0"},
	{"rmatrix", "close", "1"},
	{"rmatrix", "close", "0"},
	{"rmatrix", "none", "1"},
	{"rmatrix1", "close", "1"},
}

// shutdownText names an app.js SHUTDOWN value.
func shutdownText(s string) string {
	switch s {
	case "close":
		return "server.close()"
	case "none":
		return "nothing (killed)"
	}
	return "drains (Connection: close, then close)"
}

// reloadMatrix is the reload figure for every matrix case (bm2 only):
// the project file gets the case's SHUTDOWN in [env] (bm2 serve: a
// rolling restart onto it), the sandbox the case's tcp_migrate_req, and
// each load is measured as in §4.
func (r *runner) reloadMatrix(ctx context.Context) error {
	s := r.s
	b := r.bm2
	byName := map[string]benchProject{}
	for _, p := range bm2Projects {
		byName[p.name] = p
	}
	r.record("reloadmatrix",
		"# each case: SHUTDOWN in the project file's [env] (none for the draining app), then",
		"cd /srv/PROJECT && bm2 serve >/dev/null && "+probesDone,
		"sysctl -q -w net.ipv4.tcp_migrate_req=0|1",
		"# each load, as in §4:",
		reloadScript(s.WrkThreads, s.WrkConns, s.ReloadDur, KeepAlive, "http://127.0.0.1:PORT/", "bm2 reload PROJECT"),
		"# afterwards: sysctl -q -w net.ipv4.tcp_migrate_req=1 (as bm2 ships it); the projects deleted")
	defer b.sh(context.WithoutCancel(ctx), "sysctl -q -w net.ipv4.tcp_migrate_req=1; bm2 delete rmatrix >/dev/null; bm2 delete rmatrix1 >/dev/null")
	for _, c := range matrixCases {
		p := byName[c.project]
		toml := p.toml()
		if c.shutdown != "" {
			toml += fmt.Sprintf("\n[env]\nSHUTDOWN = %q\n", c.shutdown)
		}
		if err := b.WriteFile("/srv/"+p.name+"/bm2.toml", []byte(toml), 0o644); err != nil {
			return err
		}
		setup := fmt.Sprintf("cd /srv/%s && bm2 serve >/dev/null && %s && sysctl -q -w net.ipv4.tcp_migrate_req=%s", p.name, probesDone, c.migrate)
		if out, err := b.sh(ctx, setup); err != nil {
			return fmt.Errorf("%s: %w\n%s", setup, err, out)
		}
		inst := fmt.Sprintf("%d instances", p.instances)
		if p.instances == 1 {
			inst = "1 instance (surge)"
		}
		url := fmt.Sprintf("http://127.0.0.1:%d/", p.port)
		for rep := range s.MatrixReps {
			for _, mode := range []string{KeepAlive, Close} {
				out, err := b.sh(ctx, reloadScript(s.WrkThreads, s.WrkConns, s.ReloadDur, mode, url, "bm2 reload "+p.name))
				if err != nil {
					return fmt.Errorf("bm2 reload %s: %w\n%s", p.name, err, out)
				}
				run, err := parseReload(out)
				if err != nil {
					return err
				}
				if run.Exit != 0 {
					return fmt.Errorf("bm2 reload %s: exit status %d\n%s", p.name, run.Exit, run.Output)
				}
				v := fmt.Sprintf("%s, app on SIGTERM: %s, tcp_migrate_req = %s, %s", inst, shutdownText(c.shutdown), c.migrate, mode)
				r.sample("reloadmatrix", v, "failed requests", rep, float64(run.Failed))
				r.sample("reloadmatrix", v, "requests", rep, float64(run.Wrk.Requests))
				r.sample("reloadmatrix", v, "bm2 reload took (ms)", rep, run.ReloadMs)
				r.logf("reloadmatrix %d/%d %s: %d of %d requests failed; reload took %.0f ms", rep+1, s.MatrixReps, v, run.Failed, run.Wrk.Requests, run.ReloadMs)
				if out, err := b.sh(ctx, probesDone+" && sleep 2"); err != nil {
					return fmt.Errorf("settle: %w\n%s", err, out)
				}
			}
		}
	}
	return nil
}
