package sysd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"

	"github.com/godbus/dbus/v5"
)

func TestErrorMapping(t *testing.T) {
	denied := dbus.Error{Name: "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", Body: []any{"Interactive authentication required."}}
	err := mapErr("stop bm2-api.target", fmt.Errorf("call: %w", denied))
	if !IsDenied(err) || IsUnreachable(err) || err.Error() != "stop bm2-api.target: permission denied: call: Interactive authentication required." {
		t.Fatalf("%v", err)
	}
	gone := &dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown", Body: []any{"The name is not activatable"}}
	if err := mapErr("reload", gone); !IsUnreachable(err) || !strings.HasPrefix(err.Error(), "systemd is not reachable: reload: ") {
		t.Fatalf("%v", err)
	}
	if err := mapErr("reload", dbus.ErrClosed); !IsUnreachable(err) {
		t.Fatalf("%v", err)
	}
	if !IsNoSuchUnit(dbus.Error{Name: "org.freedesktop.systemd1.NoSuchUnit"}) || IsNoSuchUnit(errors.New("plain")) {
		t.Fatal("IsNoSuchUnit")
	}
	if err := mapErr("x", errors.New("plain")); IsDenied(err) || IsUnreachable(err) || err.Error() != "x: plain" {
		t.Fatalf("%v", err)
	}
}

func TestPropertyConversions(t *testing.T) {
	if usec(uint64(0)) != (time.Time{}) || usec(uint64(Unknown)) != (time.Time{}) || usec("x") != (time.Time{}) {
		t.Fatal("never must be the zero time")
	}
	if got := usec(uint64(1_700_000_000_000_000)); !got.Equal(time.Unix(1_700_000_000, 0)) {
		t.Fatal(got)
	}
	if str(nil) != "" || u32(uint32(7)) != 7 || i32(int32(-1)) != -1 || !boolean(true) || u32("7") != 0 {
		t.Fatal("conversions")
	}
	if !IsService("bm2@api-0.service") || IsService("bm2-api.target") || IsService(".service") {
		t.Fatal("IsService")
	}
	if jobID([]any{uint32(5), dbus.ObjectPath("/x")}) != 5 || jobID([]any{uint32(0), dbus.ObjectPath("/")}) != 0 || jobID(nil) != 0 {
		t.Fatal("jobID")
	}
	argv := execArgv([][]any{{"/usr/lib/bm2/bm2-probe", []string{"/usr/lib/bm2/bm2-probe", "run", "node"}, false}})
	if strings.Join(argv, " ") != "/usr/lib/bm2/bm2-probe run node" || execArgv(nil) != nil {
		t.Fatalf("execArgv %q", argv)
	}
	if invocation(make([]byte, 16)) != "" || invocation([]byte{0xab, 1}) != "ab01" {
		t.Fatal("invocation")
	}
	var s Status
	s.fillService(map[string]any{"UID": uint32(61000), "GID": uint32(61000), "Environment": []string{"A=1", "BM2_APP_PORT=3000"},
		"TimeoutStopUSec": uint64(1_600_000)})
	if s.UID != 61000 || s.Env("BM2_APP_PORT") != "3000" || s.Env("B") != "" || s.TimeoutStop != 1600*time.Millisecond {
		t.Fatalf("%+v", s)
	}
	if n := NotFound("x.service"); !n.Gone() || n.Running() || n.UID != NoID {
		t.Fatalf("%+v", n)
	}
	// A timer: when it triggers next and last; never is the zero time.
	if !IsTimer("bm2-api-restart.timer") || IsTimer(".timer") || IsTimer("bm2-api-restart.service") {
		t.Fatal("IsTimer")
	}
	var tm Status
	tm.fillTimer(map[string]any{"NextElapseUSecRealtime": uint64(1_796_529_600_000_000), "LastTriggerUSec": uint64(0)})
	if !tm.NextElapse.Equal(time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)) || !tm.LastTrigger.IsZero() {
		t.Fatalf("%+v", tm)
	}
	tm.fillTimer(map[string]any{"NextElapseUSecRealtime": uint64(Unknown)})
	if !tm.NextElapse.IsZero() {
		t.Fatalf("infinity: %v", tm.NextElapse)
	}
}

// On a host without systemd (like the one unit tests run on), connecting
// fails quickly and says systemd is not reachable.
func TestConnectWithoutSystemd(t *testing.T) {
	for _, sock := range []string{"/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/run/systemd/private"} {
		if _, err := os.Stat(sock); err == nil {
			testutil.Skip(t, testutil.Need{What: "this host runs systemd or D-Bus (" + sock + " exists)",
				Fix: "run the unit tests where PID 1 is not systemd, as CI does"})
		}
	}
	if os.Getenv("DBUS_SYSTEM_BUS_ADDRESS") != "" {
		testutil.Skip(t, testutil.Need{What: "DBUS_SYSTEM_BUS_ADDRESS is set", Fix: "unset DBUS_SYSTEM_BUS_ADDRESS"})
	}
	start := time.Now()
	for _, connect := range []func(context.Context) (*Conn, error){Connect, ConnectPrivate} {
		c, err := connect(context.Background())
		if err == nil {
			c.Close()
			t.Fatal("connected")
		}
		if !IsUnreachable(err) || !strings.HasPrefix(err.Error(), "systemd is not reachable: connect to ") {
			t.Fatalf("%v", err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

// TasksCurrent comes with the Service properties Unit reads; systemd's
// 2^64-1, or no property at all (no TasksAccounting=), is Unknown.
func TestUnitTasksCurrent(t *testing.T) {
	w := newWorld()
	w.units["bm2@a-1.service"] = map[string]any{"ActiveState": "active", "SubState": "running"}
	w.units["bm2@a-2.service"] = map[string]any{"ActiveState": "active", "SubState": "running"}
	w.types = map[string]map[string]any{
		"bm2@a-0.service/Service": {"TasksCurrent": uint64(12), "MemoryCurrent": uint64(1 << 20)},
		"bm2@a-1.service/Service": {"TasksCurrent": uint64(Unknown)},
	}
	c := w.conn(time.Second, true)
	for unit, want := range map[string]uint64{"bm2@a-0.service": 12, "bm2@a-1.service": Unknown, "bm2@a-2.service": Unknown} {
		st, err := c.Unit(context.Background(), unit)
		if err != nil {
			t.Fatal(err)
		}
		if st.TasksCurrent != want {
			t.Errorf("%s: TasksCurrent %d, want %d", unit, st.TasksCurrent, want)
		}
	}
	if n := NotFound("x.service"); n.TasksCurrent != Unknown {
		t.Errorf("NotFound: TasksCurrent %d", n.TasksCurrent)
	}
}

// A loaded timer's Timer properties are read with its state; an unloaded
// one's are not asked for (systemd would answer for a bare unit).
func TestUnitReadsTimers(t *testing.T) {
	w := newWorld()
	w.units["bm2-api-restart.timer"] = map[string]any{"LoadState": "loaded", "ActiveState": "active", "SubState": "waiting"}
	w.units["bm2-web-restart.timer"] = map[string]any{"LoadState": "not-found", "ActiveState": "inactive", "SubState": "dead"}
	w.types = map[string]map[string]any{"bm2-api-restart.timer/Timer": {
		"NextElapseUSecRealtime": uint64(1_796_529_600_000_000), "LastTriggerUSec": uint64(1_795_924_800_000_000)}}
	c := w.conn(time.Second, true)
	st, err := c.Units(context.Background(), []string{"bm2-api-restart.timer", "bm2-web-restart.timer"})
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC); !st[0].NextElapse.Equal(want) || !st[0].LastTrigger.Equal(want.AddDate(0, 0, -7)) || st[0].SubState != "waiting" {
		t.Fatalf("%+v", st[0])
	}
	if !st[1].NextElapse.IsZero() || strings.Join(w.asked, " ") != "bm2-api-restart.timer/Timer" {
		t.Fatalf("%+v, asked %q", st[1], w.asked)
	}
}
