package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]uint64{"1": 1, "300": 300, "300M": 300 << 20, "1G": 1 << 30, "2T": 2 << 40, "512K": 512 << 10} {
		if n, ok := ParseBytes(s); !ok || n != want {
			t.Errorf("ParseBytes(%q) = %d %v, want %d", s, n, ok, want)
		}
	}
	for _, s := range []string{"", "0", "300MB", "1.5G", "-1M", "1P", "80%", "infinity", "99999999999999999999", "17179869184G", " 1M"} {
		if n, ok := ParseBytes(s); ok {
			t.Errorf("ParseBytes(%q) = %d, accepted", s, n)
		}
	}
}

func TestMemoryRestartKeys(t *testing.T) {
	base := "name = \"m\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\n"
	p := mustParse(t, "m", base+"memory_restart = \"300M\"\n", Options{})
	if p.MemoryRestart != (MemoryRestart{Limit: 300 << 20, Size: "300M", Interval: DefaultMemoryCheckInterval}) || !p.MemoryWatched() {
		t.Errorf("defaults: %+v", p.MemoryRestart)
	}
	p = mustParse(t, "m", base+"memory_restart = \"1G\"\nmemory_check_interval_ms = 1000\n[resources]\nmemory_max = \"2G\"\n", Options{})
	if p.MemoryRestart.Interval != time.Second || p.MemoryRestart.Limit != 1<<30 {
		t.Errorf("%+v", p.MemoryRestart)
	}
	if n := mustParse(t, "m", base, Options{}); n.MemoryWatched() || n.MemoryRestart != (MemoryRestart{}) {
		t.Errorf("no memory_restart, yet %+v", n.MemoryRestart)
	}
	for _, c := range []struct{ doc, want string }{
		{"memory_restart = \"300MB\"\n", `m.toml:5: memory_restart: must be a size like "300M"`},
		{"memory_restart = \"80%\"\n", `m.toml:5: memory_restart: must be a size like "300M"`},
		{"memory_restart = 300\n", `m.toml:5: memory_restart: must be a string`},
		{"memory_restart = \"16M\"\n", `m.toml:5: memory_restart: must be at least 32M`},
		{"memory_check_interval_ms = 2000\n", `m.toml:5: memory_check_interval_ms: needs memory_restart`},
		{"memory_restart = \"300M\"\nmemory_check_interval_ms = 10\n", `m.toml:6: memory_check_interval_ms:`},
		{"memory_restart = \"512M\"\n[resources]\nmemory_max = \"512M\"\n", `m.toml:5: memory_restart: must be below [resources] memory_max (512M)`},
		{"memory_restart = \"1G\"\n[resources]\nmemory_max = \"512M\"\n", `m.toml:5: memory_restart: must be below [resources] memory_max (512M)`},
		{"memory_restart = \"300M\"\n[resources]\nmemory_high = \"256M\"\n", `m.toml:5: memory_restart: must be below [resources] memory_high (256M)`},
	} {
		_, err := Parse("/etc/bm2/m.toml", []byte(base+c.doc), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.doc, err, c.want)
		}
	}
	// A percentage or infinity cannot be compared here: accepted.
	for _, max := range []string{"80%", "infinity"} {
		mustParse(t, "m", base+"memory_restart = \"300M\"\n[resources]\nmemory_max = \""+max+"\"\n", Options{})
	}
}

// Marshal writes memory_restart as written and the interval when it is
// not the default; they come back the same.
func TestMarshalMemoryRestart(t *testing.T) {
	base := "name = \"m\"\nscript = \"a.js\"\ncwd = \"/srv/m\"\nport = 3000\n"
	for _, keys := range []string{"memory_restart = \"300M\"\n", "memory_restart = \"1G\"\nmemory_check_interval_ms = 2000\n"} {
		p := mustParse(t, "m", base+keys, Options{})
		out := string(roundTrip(t, p, 1))
		var got strings.Builder
		for _, l := range strings.SplitAfter(out, "\n") {
			if strings.HasPrefix(l, "memory_") {
				got.WriteString(l)
			}
		}
		if got.String() != keys {
			t.Errorf("Marshal wrote %q, want %q", got.String(), keys)
		}
	}
}

func TestMemorySummary(t *testing.T) {
	p := mustParse(t, "m", "name = \"m\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\nmemory_restart = \"300M\"\n", Options{})
	if got, want := p.MemorySummary(), "an instance whose memory is above 300M (checked every 5s, and again 1s later; not in its first 10s) is reloaded alone, as `bm2 reload m-<i>` does"; got != want {
		t.Errorf("MemorySummary = %q, want %q", got, want)
	}
	if FormatBytes(327614259) != "312.4 MiB" || FormatBytes(512) != "512 B" {
		t.Errorf("FormatBytes: %s %s", FormatBytes(327614259), FormatBytes(512))
	}
}
