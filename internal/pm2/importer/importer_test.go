package importer

import (
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/bm2dev/bm2/internal/pm2/convert"
)

// bm2 start imports an ecosystem file or a dump, by its name, and runs
// a script.
func TestIsEcosystemFile(t *testing.T) {
	for file, want := range map[string]bool{
		"ecosystem.config.js": true, "pm2.config.cjs": true, "apps.json": true, "apps.YAML": true,
		"dump.pm2": true, "app.js": false, "server.config.txt": false, "dir/app.ts": false,
	} {
		if got := IsEcosystemFile(file); got != want {
			t.Errorf("%s: %v, want %v", file, got, want)
		}
	}
}

// The app of `pm2 start app.js -i max --env A=1 --env A=2 -- -v`.
func TestScriptApp(t *testing.T) {
	app := ScriptApp("/srv/api/app.js", "api", "max", []string{"A=1", "B=x=y", "A=2"}, []string{"-v"})
	if want := []string{"name", "script", "cwd", "instances", "exec_mode", "env", "args"}; !reflect.DeepEqual(app.Keys, want) {
		t.Errorf("keys %q, want %q", app.Keys, want)
	}
	if app.Values["script"] != "app.js" || app.Values["cwd"] != "/srv/api" || app.Values["exec_mode"] != "cluster" {
		t.Errorf("values %v", app.Values)
	}
	env := app.Values["env"].(*convert.Object)
	if !reflect.DeepEqual(env.Keys, []string{"A", "B"}) || env.Values["A"] != "2" || env.Values["B"] != "x=y" {
		t.Errorf("env %+v", env)
	}
	if args := app.Values["args"].([]any); len(args) != 1 || args[0] != "-v" {
		t.Errorf("args %v", args)
	}
}

// Find takes the one ecosystem file of the current directory.
func TestFind(t *testing.T) {
	t.Chdir(t.TempDir())
	var fe *FindError
	if _, err := Find(); !errors.As(err, &fe) || len(fe.Found) != 0 {
		t.Errorf("none: %v", err)
	}
	os.WriteFile("ecosystem.config.js", nil, 0o644)
	if f, err := Find(); err != nil || f != "ecosystem.config.js" {
		t.Errorf("one: %q %v", f, err)
	}
	os.WriteFile("ecosystem.json", nil, 0o644)
	if _, err := Find(); err == nil || err.Error() != "more than one ecosystem file here: ecosystem.config.js, ecosystem.json" {
		t.Errorf("two: %v", err)
	}
}
