package probehelper

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/hooks"
)

// runMain runs Main with args and returns its exit status, stdout and
// stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var stdout bytes.Buffer
	code := Main(context.Background(), args, &stdout, stderr)
	errOut, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), string(errOut)
}

// The command line is checked before anything reaches systemd, the
// spool or the cgroup tree: every mistake is one "bm2-probe: " line on
// stderr and exit status 1.
func TestMainRefusesBadCommandLines(t *testing.T) {
	t.Setenv("RUNTIME_DIRECTORY", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "bm2-probe: usage: bm2-probe PROJECT-INDEX | run bun|node [--env-file PATH] -- RUNTIME ... | exited PROJECT-INDEX | failed PROJECT-INDEX | fence PROJECT-INDEX [PORT...] | fence --no-bind UNIT | health PROJECT | memory PROJECT | notify | events | steer add|drain PROJECT-INDEX\n"},
		{[]string{"bogus"}, "bm2-probe: \"bogus\" is not an instance name like api-0\n"},
		{[]string{"api-0", "extra"}, "bm2-probe: usage: bm2-probe PROJECT-INDEX (as bm2-probe@PROJECT-INDEX.service runs it)\n"},
		{[]string{"exited"}, "bm2-probe: usage: bm2-probe exited PROJECT-INDEX\n"},
		{[]string{"failed", "api-0", "extra"}, "bm2-probe: usage: bm2-probe failed PROJECT-INDEX\n"},
		{[]string{"notify", "now"}, "bm2-probe: usage: bm2-probe notify (as bm2-notify.service runs it)\n"},
		{[]string{"events", "now"}, "bm2-probe: usage: bm2-probe events (as bm2-events.service runs it)\n"},
		{[]string{"health"}, "bm2-probe: usage: bm2-probe health PROJECT (as bm2-PROJECT-health.service runs it)\n"},
		{[]string{"health", "../etc"}, "bm2-probe: \"../etc\" is not a project name\n"},
		{[]string{"health-get", "2000", "/h"}, "bm2-probe: usage: bm2-probe health-get TIMEOUT_MS PATH INDEX:PORT... (bm2-probe health runs it)\n"},
		{[]string{"health-get", "0", "/h", "0:3000"}, "bm2-probe: health-get: \"0\" is not a timeout in milliseconds\n"},
		{[]string{"health-get", "2000", "h", "0:3000"}, "bm2-probe: health-get: \"h\" is not a path\n"},
		{[]string{"health-get", "2000", "/h", "0:70000"}, "bm2-probe: health-get: \"0:70000\" is not INDEX:PORT (like 0:3100 or surge:3104)\n"},
		{[]string{"fence"}, "bm2-probe: usage: bm2-probe fence PROJECT-INDEX [PORT...]\n"},
		{[]string{"fence", "api-0", "70000"}, "bm2-probe: fence: \"70000\" is not a port (1-65535)\n"},
		{[]string{"run", "bun"}, "bm2-probe: usage: bm2-probe run bun|node [--env-file PATH] -- RUNTIME [ARG...]\n"},
		{[]string{"run", "deno", "--", "deno", "main.ts"}, "bm2-probe: unknown runtime \"deno\"\n"},
	} {
		code, stdout, stderr := runMain(t, c.args...)
		if code != 1 || stdout != "" || stderr != c.want {
			t.Errorf("bm2-probe %q: exit %d, stdout %q, stderr %q; want exit 1 and stderr %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// A refusal of `run` exits with hooks.ExitRefused, which bm2@.service
// does not restart, and is said once, by the wrapper ("bm2: …").
func TestMainRunRefusalExitStatus(t *testing.T) {
	t.Setenv("RUNTIME_DIRECTORY", "")
	missing := filepath.Join(t.TempDir(), "bun")
	code, stdout, stderr := runMain(t, "run", "bun", "--", missing, "index.ts")
	if code != hooks.ExitRefused {
		t.Fatalf("exit %d, want %d (stderr %q)", code, hooks.ExitRefused, stderr)
	}
	if !strings.HasPrefix(stderr, "bm2: runtime "+missing) || strings.Contains(stderr, "bm2-probe:") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q, want the wrapper's one refusal line", stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q", stdout)
	}
}

func TestNeedsCleanEnv(t *testing.T) {
	kept := []string{"HOME=/home/alice", "USER=alice"}
	for _, c := range []struct {
		argv    []string
		environ []string
		want    bool
	}{
		{[]string{"bm2-probe", "exited", "api-0"}, []string{"HOME=/home/alice", "USER=alice", "LD_PRELOAD=/tmp/x.so"}, true},
		{[]string{"bm2-probe", "api-0"}, []string{"USER=alice", "HOME=/home/alice"}, true},
		{[]string{"bm2-probe", "notify"}, kept, false},
		// run passes the unit's environment on to the app.
		{[]string{"bm2-probe", "run", "bun", "--", "bun", "index.ts"}, []string{"PATH=/usr/bin", "NODE_ENV=production"}, false},
		// Nothing to run: the usage line needs no clean start.
		{[]string{"bm2-probe"}, []string{"PATH=/usr/bin"}, false},
	} {
		if got := needsCleanEnv(c.argv, c.environ, kept); got != c.want {
			t.Errorf("needsCleanEnv(%q, %q) = %v, want %v", c.argv, c.environ, got, c.want)
		}
	}
}

// Only bm2's own units (the probe, the steering step) clear the
// environment in place; whatever runs in an instance's cgroup, whose
// environment the project file wrote, starts over without it.
func TestOwnUnit(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"bm2-probe", "api-0"}, true},
		{[]string{"bm2-probe", "api-surge"}, true},
		{[]string{"bm2-probe", "steer", "add", "api-0"}, true},
		{[]string{"bm2-probe", "steer", "prepare"}, true},
		{[]string{"bm2-probe", "steer", "drain", "api-0"}, false},
		{[]string{"bm2-probe", "exited", "api-0"}, false},
		{[]string{"bm2-probe", "fence", "api-0", "3000"}, false},
		{[]string{"bm2-probe", "failed", "api-0"}, false},
		{[]string{"bm2-probe", "health-get", "2000", "/h", "0:3000"}, false},
		{[]string{"bm2-probe", "exited"}, false},
		{[]string{"bm2-probe", "api-0", "extra"}, false},
		{[]string{"bm2-probe"}, false},
	} {
		if got := ownUnit(c.argv); got != c.want {
			t.Errorf("ownUnit(%q) = %v, want %v", c.argv, got, c.want)
		}
	}
}

// In place, the environment is kept's and nothing else.
func TestCleanEnvInPlace(t *testing.T) {
	saved := os.Environ()
	t.Cleanup(func() {
		os.Clearenv()
		for _, kv := range saved {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	})
	os.Setenv("GODEBUG", "x=1")
	os.Setenv("HOME", "/home/alice")
	os.Setenv("USER", "alice")
	if err := CleanEnv([]string{"bm2-probe", "api-0"}); err != nil {
		t.Fatal(err)
	}
	want := keptEnv(os.Geteuid(), func(k string) (string, bool) {
		return map[string]string{"HOME": "/home/alice", "USER": "alice"}[k], true
	})
	if got := os.Environ(); !slices.Equal(got, want) {
		t.Errorf("environment %q, want %q", got, want)
	}
}

func TestKeptEnv(t *testing.T) {
	env := map[string]string{"HOME": "/home/alice", "USER": "alice", "PATH": "/usr/bin", "LD_PRELOAD": "/tmp/x.so"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if got := keptEnv(0, lookup); len(got) != 0 {
		t.Errorf("as root: %q, want no environment at all", got)
	}
	if got, want := keptEnv(1000, lookup), []string{"HOME=/home/alice", "USER=alice"}; !slices.Equal(got, want) {
		t.Errorf("as a user: %q, want %q", got, want)
	}
	delete(env, "USER")
	if got, want := keptEnv(1000, lookup), []string{"HOME=/home/alice"}; !slices.Equal(got, want) {
		t.Errorf("as a user without USER: %q, want %q", got, want)
	}
}
