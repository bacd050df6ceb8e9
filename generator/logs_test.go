package generator

import (
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/units"
)

// The journal directives of an instance: each rate-limit key becomes its
// directive only when set, no limit (0) becomes the largest burst alone
// (systemd reads 0 as "not set"), and the level prefixes are off unless
// log_level_prefix asks for them. The surge gets the same.
func TestLogDirectives(t *testing.T) {
	unlimited := strconv.Itoa(config.MaxLogRateLimitBurst)
	for _, c := range []struct {
		keys string
		want map[string]string // directive -> value; absent: not in the drop-in
	}{
		{"", nil},
		{"log_rate_limit_burst = 100\n", map[string]string{"LogRateLimitBurst": "100"}},
		{"log_rate_limit_interval_ms = 2500\n", map[string]string{"LogRateLimitIntervalSec": "2500ms"}},
		{"log_rate_limit_burst = 100\nlog_rate_limit_interval_ms = 1000\n",
			map[string]string{"LogRateLimitBurst": "100", "LogRateLimitIntervalSec": "1000ms"}},
		{"log_rate_limit_burst = 0\n", map[string]string{"LogRateLimitBurst": unlimited}},
		{"log_rate_limit_burst = 0\nlog_rate_limit_interval_ms = 1000\n", map[string]string{"LogRateLimitBurst": unlimited}},
		{"log_rate_limit_burst = 100\nlog_rate_limit_interval_ms = 0\n", map[string]string{"LogRateLimitBurst": unlimited}},
		{"log_level_prefix = true\n", map[string]string{"SyslogLevelPrefix": "yes"}},
		{"log_level_prefix = false\n", nil},
	} {
		src := "name = \"l\"\nscript = \"a.js\"\ncwd = \"/srv/l\"\nport = 3000\ninstances = 2\n" + c.keys
		res := Generate([]config.Source{{Path: "/etc/bm2/l.toml", Data: []byte(src)}}, testOptions)
		if len(res.Skipped) > 0 {
			t.Fatalf("%q: %v", c.keys, res.Skipped)
		}
		dropIns := 0
		for _, f := range res.Files {
			if !strings.HasSuffix(f.Path, "/"+DropInName) {
				continue
			}
			dropIns++
			for _, d := range []string{"LogRateLimitBurst", "LogRateLimitIntervalSec", "SyslogLevelPrefix"} {
				got := values(f.Data, "Service", d)
				want, set := c.want[d]
				switch {
				case !set && len(got) > 0:
					t.Errorf("%q: %s sets %s=%v, want none", c.keys, f.Path, d, got)
				case set && (len(got) != 1 || got[0] != want):
					t.Errorf("%q: %s sets %s=%v, want %s once", c.keys, f.Path, d, got, want)
				}
			}
		}
		if dropIns != 3 { // two instances and the surge
			t.Fatalf("%q: %d drop-ins", c.keys, dropIns)
		}
	}
}

// An app's output cannot choose its priority: both templates turn the
// sd-daemon(3) level prefixes off, so "<0>" is not emerg (which journald
// walls to every terminal) nor "<3>" an error; the drop-in only ever turns
// them back on (above).
func TestTemplatesIgnoreLevelPrefixes(t *testing.T) {
	for name, static := range map[string]fs.FS{"system": units.Static(), "user": units.UserStatic()} {
		data, err := fs.ReadFile(static, "bm2@.service")
		if err != nil {
			t.Fatal(err)
		}
		if got := values(data, "Service", "SyslogLevelPrefix"); len(got) != 1 || got[0] != "no" {
			t.Errorf("%s bm2@.service: SyslogLevelPrefix=%v, want no", name, got)
		}
		// journald's default rate limit applies unless a project sets one.
		for _, d := range []string{"LogRateLimitBurst", "LogRateLimitIntervalSec"} {
			if got := values(data, "Service", d); len(got) > 0 {
				t.Errorf("%s bm2@.service: %s=%v, want none", name, d, got)
			}
		}
	}
}
