package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/portfence"
)

// bm2 check says in one line whether the instances will be kept to their
// ports, and why not where the host cannot do it.
func TestCheckFenceLine(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	dir := filepath.Dir(te.write("app/bm2.toml", fmt.Sprintf("name = \"api\"\nscript = \"a.js\"\nport = %d\ninstances = 2\nexec_mode = \"fork\"\n[sandbox]\nextra_ports = [9229, 9100]\n", port)))
	te.mustRun(ExitOK, "check", dir)
	if want := fmt.Sprintf("\nports: fenced at each start: an instance may bind only port %d+i and extra_ports 9229, 9100\n", port); !strings.Contains(te.stdout.String(), want) {
		t.Errorf("check lacks %q:\n%s", want, te.stdout.String())
	}
	te.stdout.Reset()
	te.fenceErr = portfence.ErrNoUnified
	te.mustRun(ExitOK, "check", dir)
	if want := "\nports: not fenced (cgroup v1 host without the unified hierarchy): an instance can bind any free port\n"; !strings.Contains(te.stdout.String(), want) {
		t.Errorf("check lacks %q:\n%s", want, te.stdout.String())
	}
}

func TestCheckFenceLineUserScope(t *testing.T) {
	te := userEnv(t)
	port := freePorts(t, 1)
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", fmt.Sprintf("name = \"api\"\nscript = \"a.js\"\nport = %d\n", port)))
	te.run("check", dir)
	if want := "\nports: not fenced (user scope: a user manager cannot attach BPF programs): an instance can bind any free port of 1024 or more\n"; !strings.Contains(te.stdout.String(), want) {
		t.Errorf("check lacks %q:\n%s", want, te.stdout.String())
	}
}

// bm2 status checks the running instances' cgroups: each carries the
// fence, or the line names the one that does not; as a normal user it
// cannot look.
func TestStatusFenceLine(t *testing.T) {
	te := served(t)
	te.fenced = map[string]error{}
	for i := 0; i < 4; i++ {
		u := te.sd.unit(fmt.Sprintf("bm2@api-%d.service", i))
		u.ControlGroup = fmt.Sprintf("/bm2.slice/bm2-api.slice/bm2@api-%d.service", i)
		if i != 2 {
			te.fenced[u.ControlGroup] = nil
		}
	}
	te.mustRun(ExitOK, "status", "api")
	if want := "  ports: NOT fenced on api-2 (no fence on its cgroup; its journal says why: `bm2 logs api`); the others may bind only port 3000\n"; !strings.Contains(te.stdout.String(), want) {
		t.Errorf("status lacks %q:\n%s", want, te.stdout.String())
	}
	te.stdout.Reset()
	te.fenced["/bm2.slice/bm2-api.slice/bm2@api-2.service"] = nil
	te.mustRun(ExitOK, "status", "api")
	if want := "  ports: fenced: an instance may bind only port 3000 (checked on api-0, api-1, api-2, api-3)\n"; !strings.Contains(te.stdout.String(), want) {
		t.Errorf("status lacks %q:\n%s", want, te.stdout.String())
	}
	te.stdout.Reset()
	for cg := range te.fenced {
		te.fenced[cg] = fmt.Errorf("query: %w", fs.ErrPermission)
	}
	te.mustRun(ExitOK, "status", "api")
	if want := "  ports: fenced at each start: an instance may bind only port 3000 (run as root to see the fence on the running instances)\n"; !strings.Contains(te.stdout.String(), want) {
		t.Errorf("status lacks %q:\n%s", want, te.stdout.String())
	}
	te.stdout.Reset()
	te.fenceErr = errors.New("cgroup v1 host without the unified hierarchy")
	te.mustRun(ExitOK, "status", "api")
	if want := "  ports: not fenced (cgroup v1 host without the unified hierarchy): an instance can bind any free port\n"; !strings.Contains(te.stdout.String(), want) {
		t.Errorf("status lacks %q:\n%s", want, te.stdout.String())
	}
}

// In user scope a system project's extra port is its own: a user project
// on it is refused like one on its port range.
func TestUserScopeRefusesASystemProjectsExtraPort(t *testing.T) {
	te := userEnv(t)
	te.write("system-etc-bm2/sys.toml", "name = \"sys\"\nscript = \"index.ts\"\ncwd = \"/srv/sys\"\nport = 8200\n[sandbox]\nextra_ports = [9229]\n")
	dir := filepath.Dir(te.write("home/alice/near/bm2.toml", "name = \"near\"\nscript = \"index.ts\"\nport = 9229\n"))
	if code := te.run("serve", dir); code != ExitInvalid {
		t.Fatalf("serve on a system project's extra port: exit %d\n%s", code, te.stderr.String())
	}
	if !strings.Contains(te.stderr.String(), "near port range 9229~9229 overlaps system project sys 9229~9229") {
		t.Errorf("no conflict named:\n%s", te.stderr.String())
	}
}
