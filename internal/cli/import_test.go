package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --only takes an app's whole name, spaces and all ("Custom Metrics"),
// and several names separated by commas; a name is also found without
// the blanks around it.
func TestImportOnlyTakesWholeNames(t *testing.T) {
	te := newTestEnv(t)
	// Run by root, import asks the runtime's version as nobody.
	for _, d := range []string{te.root, filepath.Dir(te.root)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	eco := te.write("srv/app/ecosystem.config.json", `{"apps": [
  {"name": "Custom Metrics", "script": "metrics.js", "port": 3100},
  {"name": "api", "script": "api.js", "port": 3101},
  {"name": "web", "script": "web.js", "port": 3102}
]}`)
	imported := func() string {
		var names []string
		for _, n := range []string{"custom-metrics", "api", "web"} {
			if strings.Contains(te.stdout.String(), "\n"+n+": ") {
				names = append(names, n)
			}
		}
		return strings.Join(names, " ")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--only", "Custom Metrics"}, "custom-metrics"},
		{[]string{"--only", "Custom Metrics,web"}, "custom-metrics web"},
		{[]string{"--only", "api, web"}, "api web"},
		{[]string{"--only", "api", "--only", "Custom Metrics"}, "custom-metrics api"},
		// One app: --port may set its port.
		{[]string{"--only", "Custom Metrics", "--port", "4000"}, "custom-metrics"},
	} {
		te.mustRun(ExitOK, append(append([]string{"import", "--dry-run"}, c.args...), eco)...)
		if got := imported(); got != c.want {
			t.Errorf("%q: imported %q, want %q\n%s", c.args, got, c.want, te.stdout.String())
		}
	}
	te.mustRun(ExitFailure, "import", "--dry-run", "--only", "Custom", eco)
	if !strings.Contains(te.stderr.String(), `Custom: no app of that name in ecosystem.config.json (it has "Custom Metrics", "api", "web")`) {
		t.Errorf("stderr:\n%s", te.stderr.String())
	}
}

// A file import cannot read gets a hint that says what to do next: fix
// it and import again (bm2 check reads bm2.toml, not ecosystem files).
func TestImportLoadHint(t *testing.T) {
	te := newTestEnv(t)
	eco := te.write("srv/app/ecosystem.config.json", "\n")
	te.mustRun(ExitInvalid, "import", "--dry-run", eco)
	if msg := te.stderr.String(); !strings.Contains(msg, eco+" is empty") ||
		!strings.Contains(msg, "bm2: fix the file named above, then run bm2 import again\n") || strings.Contains(msg, "bm2 check") {
		t.Errorf("stderr:\n%s", msg)
	}
	te.mustRun(ExitInvalid, "import", "--dry-run", eco+".missing")
	if msg := te.stderr.String(); !strings.Contains(msg, "bm2: name an existing file: ") {
		t.Errorf("stderr:\n%s", msg)
	}
}
