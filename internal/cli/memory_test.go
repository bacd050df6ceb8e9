package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

const seedLeaky = `name = "api"
script = "src/index.ts"
instances = 2
port = 3000
memory_restart = "300M"

[resources]
memory_max = "512M"
`

// bm2 check says what the memory restart does; serve starts its timer
// with the target and stops it once the file has no memory_restart; bm2
// delete stops the timer, the check and a memory reload under way before
// the project.
func TestMemoryRestartLifecycle(t *testing.T) {
	te, _ := healthEnv(t, nil)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedLeaky))
	te.mustRun(ExitOK, "check", dir)
	if want := "memory restart: an instance whose memory is above 300M (checked every 5s, and again 1s later; not in its first 10s) is reloaded alone, as `bm2 reload api-<i>` does\n"; !strings.Contains(te.stdout.String(), want) {
		t.Errorf("check:\n%s", te.stdout.String())
	}
	te.mustRun(ExitOK, "serve", dir)
	if u := te.sd.units["bm2-api-memory.timer"]; u == nil || u.ActiveState != "active" {
		t.Fatalf("the target did not start the memory timer: %+v", u)
	}
	te.write("srv/api/bm2.toml", strings.Replace(seedLeaky, "memory_restart = \"300M\"\n", "", 1))
	te.mustRun(ExitOK, "serve", dir)
	if out := te.stdout.String(); !strings.Contains(out, "stopped bm2-api-memory.timer: api has no memory_restart any more\n") {
		t.Errorf("serve:\n%s", out)
	}
	te.write("srv/api/bm2.toml", seedLeaky)
	te.mustRun(ExitOK, "serve", dir)
	te.sd.set(UnitStatus{Name: "bm2-api-reload@1.service", LoadState: "loaded", ActiveState: "activating", SubState: "start", MainPID: 4244})
	te.sd.Calls()
	te.mustRun(ExitOK, "delete", "api")
	calls := strings.Join(te.sd.Calls(), "\n")
	if !strings.Contains(calls, "stop bm2-api-memory.timer\n") || !strings.Contains(calls, "stop bm2-api-reload@1.service\n") ||
		strings.Index(calls, "stop bm2-api-reload@1.service") > strings.Index(calls, "stop bm2-api.target") {
		t.Errorf("calls:\n%s", calls)
	}
}
