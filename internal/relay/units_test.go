package relay

import (
	"bytes"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
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

// The shipped units watch and drain the directory the sink writes to, in
// either scope, and run the drainer.
func TestUnitsWatchTheSinksSpool(t *testing.T) {
	user := layout.User(1001, "alice", "/home/alice")
	for _, c := range []struct {
		kind   string
		static fs.FS
		dir    string // DirectoryNotEmpty= with %t as the user's runtime directory
	}{
		{"system", units.Static(), layout.System().EventsDir},
		{"user", units.UserStatic(), user.EventsDir},
	} {
		got := values(t, c.static, PathUnit, "Path", "DirectoryNotEmpty")
		if len(got) != 1 || strings.ReplaceAll(got[0], "%t", user.RuntimeDir) != c.dir {
			t.Errorf("%s %s: DirectoryNotEmpty=%q, want %s", c.kind, PathUnit, got, c.dir)
		}
		for key, want := range map[string]string{"MakeDirectory": "yes", "DirectoryMode": "0700", "Unit": ServiceUnit} {
			if got := values(t, c.static, PathUnit, "Path", key); !slices.Equal(got, []string{want}) {
				t.Errorf("%s %s: %s=%q, want %s", c.kind, PathUnit, key, got, want)
			}
		}
		for key, want := range map[string]string{"Type": "oneshot", "ExecStart": "/usr/lib/bm2/bm2-probe events",
			"RestrictAddressFamilies": "AF_UNIX"} {
			if got := values(t, c.static, ServiceUnit, "Service", key); !slices.Equal(got, []string{want}) {
				t.Errorf("%s %s: %s=%q, want %s", c.kind, ServiceUnit, key, got, want)
			}
		}
		if got := values(t, c.static, ServiceUnit, "Unit", "StartLimitIntervalSec"); !slices.Equal(got, []string{"0"}) {
			t.Errorf("%s %s: StartLimitIntervalSec=%q, want 0 (started as often as events arrive)", c.kind, ServiceUnit, got)
		}
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
