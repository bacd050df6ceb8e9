package generator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

func TestParseSystemdVersion(t *testing.T) {
	for out, want := range map[string]int{
		"systemd 252 (252.38-1~deb12u1)\n+PAM +AUDIT\n": 252,
		"systemd 254 (254.5-1.fc39)\n":                  254,
		"systemd 257\n":                                 257,
		"systemd 256~rc3 (256~rc3)\n":                   0, // not a number: taken for unknown
		"systemd  (x)\n":                                0,
		"System and Service Manager 252\n":              0,
		"":                                              0,
		"systemd -1\n":                                  0,
	} {
		if got := ParseSystemdVersion([]byte(out)); got != want {
			t.Errorf("ParseSystemdVersion(%q) = %d, want %d", out, got, want)
		}
	}
}

// The host's systemctl answers, and quickly: the generator asks it on
// every run.
func TestDetectSystemdVersion(t *testing.T) {
	testutil.Command(t, "systemctl", "sudo apt-get install systemd")
	start := time.Now()
	v := DetectSystemdVersion(context.Background())
	if took := time.Since(start); took > versionTimeout {
		t.Errorf("took %v", took)
	}
	if v < 200 {
		t.Errorf("DetectSystemdVersion = %d, want the host's systemd", v)
	}
}

// Run hands Env.SystemdVersion to the generation: the backoff and
// RestartMode=direct appear from 254 on, and not before.
func TestRunFollowsSystemdVersion(t *testing.T) {
	for version, want := range map[int]bool{0: false, 253: false, 254: true, 257: true} {
		root := t.TempDir()
		etc, out := filepath.Join(root, "etc"), filepath.Join(root, "out")
		writeProject(t, etc, "api", project("api", 3000)+"restart_delay_ms = 200\nrestart_delay_max_ms = 9000\n")
		env := Env{Getenv: func(k string) string {
			if k == "BM2_CONFIG_PATH" {
				return etc
			}
			return ""
		}, Log: &recorder{}, NumCPU: 2, Layout: systemScope(),
			SystemdVersion: func(context.Context) int { return version }}
		if err := Run(context.Background(), []string{out}, env); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(out, "bm2@api-0.service.d", DropInName))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(string(data), "\nRestartSteps=5\nRestartMaxDelaySec=9000ms\n")
		if got != want || !strings.Contains(string(data), "\nRestartSec=200ms\n") {
			t.Errorf("systemd %d: backoff written %v, want %v:\n%s", version, got, want, data)
		}
		if got := strings.Contains(string(data), "\nRestartSec=200ms\nRestartMode=direct\n"); got != want {
			t.Errorf("systemd %d: RestartMode=direct written %v, want %v:\n%s", version, got, want, data)
		}
	}
}

// Run asks the systemd version once when there is a project file, while
// the files are parsed (every instance's RestartMode= depends on it), and
// never without one: an empty /etc/bm2 starts no systemctl.
func TestRunAsksSystemdVersionOnceWithProjects(t *testing.T) {
	for _, c := range []struct {
		name, body string
		asks       bool
	}{
		{"no project", "", false},
		{"a project", project("api", 3000), true},
		{"backoff", project("api", 3000) + "restart_delay_ms = 200\nrestart_delay_max_ms = 9000\n", true},
	} {
		root := t.TempDir()
		etc, out := filepath.Join(root, "etc"), filepath.Join(root, "out")
		if err := os.MkdirAll(etc, 0o755); err != nil {
			t.Fatal(err)
		}
		if c.body != "" {
			writeProject(t, etc, "api", c.body)
			writeProject(t, etc, "web", project("web", 4000))
		}
		asked := 0
		env := Env{Getenv: func(k string) string {
			if k == "BM2_CONFIG_PATH" {
				return etc
			}
			return ""
		}, Log: &recorder{}, NumCPU: 2, Layout: systemScope(),
			SystemdVersion: func(context.Context) int { asked++; return 254 }}
		if err := Run(context.Background(), []string{out}, env); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 0, true: 1}[c.asks]; asked != want {
			t.Errorf("%s: systemd version asked %d times, want %d", c.name, asked, want)
		}
		if !c.asks {
			continue
		}
		for _, name := range []string{"api", "web"} {
			data, err := os.ReadFile(filepath.Join(out, "bm2@"+name+"-0.service.d", DropInName))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "\nRestartMode=direct\n") {
				t.Errorf("%s: %s has no RestartMode=direct:\n%s", c.name, name, data)
			}
		}
	}
}
