package relay

import (
	"bytes"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
	"github.com/coreos/go-systemd/v22/unit"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// values is every value of key in section of a unit file.
func values(t *testing.T, static fs.FS, name, section, key string) []string {
	t.Helper()
	data, err := fs.ReadFile(static, name)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := unit.Deserialize(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []string
	for _, o := range opts {
		if o.Section == section && o.Name == key {
			out = append(out, o.Value)
		}
	}
	return out
}

// The shipped units make and drain the directory the sink writes to, in
// either scope: every probe makes it (RuntimeDirectory=, root's or the
// user's alone) and drains it; the timer starts the drainer's service
// only while events wait there, and no path unit starts a unit for an
// event on a restart's path.
func TestUnitsDrainTheSinksSpool(t *testing.T) {
	user := layout.User(1001, "alice", "/home/alice")
	for _, c := range []struct {
		kind   string
		static fs.FS
		dir    string // ConditionDirectoryNotEmpty= with %t as the user's runtime directory
		run    string // the RuntimeDirectory= base of the scope
	}{
		{"system", units.Static(), layout.System().EventsDir, "/run"},
		{"user", units.UserStatic(), user.EventsDir, user.RuntimeDir},
	} {
		got := values(t, c.static, ServiceUnit, "Unit", "ConditionDirectoryNotEmpty")
		if len(got) != 1 || strings.ReplaceAll(got[0], "%t", user.RuntimeDir) != c.dir {
			t.Errorf("%s %s: ConditionDirectoryNotEmpty=%q, want %s", c.kind, ServiceUnit, got, c.dir)
		}
		rd := values(t, c.static, ProbeUnit, "Service", "RuntimeDirectory")
		if len(rd) != 1 || !slices.Contains(strings.Fields(rd[0]), strings.TrimPrefix(strings.TrimPrefix(c.dir, c.run), "/")) {
			t.Errorf("%s %s: RuntimeDirectory=%q, want it to make %s", c.kind, ProbeUnit, rd, c.dir)
		}
		for key, want := range map[string]string{"RuntimeDirectoryMode": "0700", "RuntimeDirectoryPreserve": "yes"} {
			if got := values(t, c.static, ProbeUnit, "Service", key); !slices.Equal(got, []string{want}) {
				t.Errorf("%s %s: %s=%q, want %s", c.kind, ProbeUnit, key, got, want)
			}
		}
		for key, want := range map[string]string{"Unit": ServiceUnit, "OnCalendar": "*:*:0/30", "AccuracySec": "1s"} {
			if got := values(t, c.static, TimerUnit, "Timer", key); !slices.Equal(got, []string{want}) {
				t.Errorf("%s %s: %s=%q, want %s", c.kind, TimerUnit, key, got, want)
			}
		}
		if _, err := fs.Stat(c.static, "bm2-events.path"); err == nil {
			t.Errorf("%s: bm2-events.path is shipped: it starts a unit on every restart's path", c.kind)
		}
		for key, want := range map[string]string{"Type": "oneshot", "ExecStart": "/usr/lib/bm2/bm2-probe events",
			"RestrictAddressFamilies": "AF_UNIX"} {
			if got := values(t, c.static, ServiceUnit, "Service", key); !slices.Equal(got, []string{want}) {
				t.Errorf("%s %s: %s=%q, want %s", c.kind, ServiceUnit, key, got, want)
			}
		}
		if got := values(t, c.static, ServiceUnit, "Unit", "StartLimitIntervalSec"); !slices.Equal(got, []string{"0"}) {
			t.Errorf("%s %s: StartLimitIntervalSec=%q, want 0 (started as often as events wait)", c.kind, ServiceUnit, got)
		}
	}
	// The system's failure hook may write (drain) the spool.
	if got := values(t, units.Static(), "bm2-failed@.service", "Service", "ReadWritePaths"); !slices.Contains(got, "-"+layout.System().EventsDir) {
		t.Errorf("bm2-failed@.service: ReadWritePaths=%q, want -%s", got, layout.System().EventsDir)
	}
}

// journald never drops the events of the system's relay: its burst is
// the largest journald can scale (0 would be "not set", journald's
// default), far more than the spool ever holds, and no interval is set;
// it may write the spool alone, and reach no network.
func TestSystemServiceLiftsTheLimit(t *testing.T) {
	s := units.Static()
	if got := values(t, s, ServiceUnit, "Service", "LogRateLimitBurst"); !slices.Equal(got, []string{strconv.Itoa(config.MaxLogRateLimitBurst)}) {
		t.Errorf("LogRateLimitBurst=%q, want %d", got, config.MaxLogRateLimitBurst)
	}
	if config.MaxLogRateLimitBurst <= MaxFiles {
		t.Errorf("the burst %d does not exceed what the spool holds (%d)", config.MaxLogRateLimitBurst, MaxFiles)
	}
	if got := values(t, s, ServiceUnit, "Service", "LogRateLimitIntervalSec"); len(got) != 0 {
		t.Errorf("LogRateLimitIntervalSec=%q: systemd does not pass 0 on, and any other value only limits", got)
	}
	if got := values(t, s, ServiceUnit, "Service", "ReadWritePaths"); !slices.Equal(got, []string{layout.System().EventsDir}) {
		t.Errorf("ReadWritePaths=%q, want the spool alone", got)
	}
	if got := values(t, s, ServiceUnit, "Service", "IPAddressDeny"); !slices.Equal(got, []string{"any"}) {
		t.Errorf("IPAddressDeny=%q, want any", got)
	}
	if got := values(t, s, ServiceUnit, "Service", "CapabilityBoundingSet"); !slices.Equal(got, []string{""}) {
		t.Errorf("CapabilityBoundingSet=%q, want none", got)
	}
}

// The timer's service keeps systemd's info lines about it (skipped by its
// condition every half minute, started, finished) out of the journal with
// LogLevelMax=notice, which would drop anything it sends below notice:
// no event the hooks relay is below notice (the one info kind is the
// probe's own confirmation, which it sends directly), and its own lines
// are logged at notice.
func TestTimerServiceIsQuietAndLosesNoEvent(t *testing.T) {
	for _, c := range []struct {
		kind   string
		static fs.FS
	}{{"system", units.Static()}, {"user", units.UserStatic()}} {
		for key, want := range map[string]string{"LogLevelMax": "notice", "SyslogLevel": "notice"} {
			if got := values(t, c.static, ServiceUnit, "Service", key); !slices.Equal(got, []string{want}) {
				t.Errorf("%s %s: %s=%q, want %s", c.kind, ServiceUnit, key, got, want)
			}
		}
	}
	for _, k := range journal.Kinds() {
		if k != journal.ReuseportConfirmed && k.Priority() > sdjournal.PriNotice {
			t.Errorf("event %s has priority %d, below notice: the relay's service would drop it", k, k.Priority())
		}
	}
}
