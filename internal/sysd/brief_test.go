package sysd

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// briefWorld has a running service with every property Brief reads, a
// stopped one that never ran, a timer, and knows no other unit.
func briefWorld() *world {
	now := uint64(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC).UnixMicro())
	w := newWorld()
	w.units = map[string]map[string]any{
		"bm2@a-0.service": {
			"LoadState": "loaded", "ActiveState": "active", "SubState": "running", "Job": []any{uint32(7), dbus.ObjectPath("/org/freedesktop/systemd1/job/7")},
			"ActiveEnterTimestamp": now, "ActiveEnterTimestampMonotonic": uint64(5e6), "InactiveEnterTimestamp": now - 1e6,
			"StateChangeTimestampMonotonic": uint64(6e6), "InvocationID": []byte{0xab, 0xcd}, "FragmentPath": "/usr/lib/systemd/system/bm2@.service",
		},
		"bm2@a-1.service": {
			"LoadState": "loaded", "ActiveState": "inactive", "SubState": "dead", "Job": []any{uint32(0), dbus.ObjectPath("/")},
			"ActiveEnterTimestamp": uint64(0), "ActiveEnterTimestampMonotonic": uint64(0), "InactiveEnterTimestamp": uint64(0),
			"InvocationID": []byte{},
		},
		"bm2-a-restart.timer": {
			"LoadState": "loaded", "ActiveState": "active", "SubState": "waiting", "Job": []any{uint32(0), dbus.ObjectPath("/")},
			"ActiveEnterTimestamp": now, "ActiveEnterTimestampMonotonic": uint64(1), "InactiveEnterTimestamp": uint64(0),
			"InvocationID": []byte{1},
		},
	}
	w.types = map[string]map[string]any{
		"bm2@a-0.service/Service": {
			"Result": "success", "MainPID": uint32(4242), "NRestarts": uint32(3), "ExecMainCode": int32(0), "ExecMainStatus": int32(0),
			"ExecMainStartTimestamp": now, "ControlGroup": "/bm2.slice/bm2-a.slice/bm2@a-0.service",
			"MemoryCurrent": uint64(1 << 20), "CPUUsageNSec": uint64(5e8), "TasksCurrent": uint64(11), "UID": uint32(61000), "GID": uint32(61000),
			"User": "bm2-a", "ExecStart": [][]any{{"/usr/lib/bm2/bm2-probe", []string{"bm2-probe", "run"}}},
		},
		"bm2@a-1.service/Service": {
			"Result": "success", "MainPID": uint32(0), "NRestarts": uint32(0), "ExecMainCode": int32(0), "ExecMainStatus": int32(0),
			"ExecMainStartTimestamp": uint64(0), "ControlGroup": "",
			"MemoryCurrent": uint64(Unknown), "CPUUsageNSec": uint64(Unknown), "TasksCurrent": uint64(Unknown), "UID": uint32(NoID), "GID": uint32(NoID),
		},
	}
	return w
}

// Brief says of every unit what Units says, for the fields it fills in,
// and leaves the rest zero.
func TestBriefAgreesWithUnits(t *testing.T) {
	names := []string{"bm2@a-0.service", "bm2@a-1.service", "bm2@gone-0.service", "bm2-a-restart.timer"}
	ctx := context.Background()
	full, err := briefWorld().conn(time.Second, true).Units(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	if full[0].StateChangeMonotonic != 6*time.Second || full[0].ActiveEnterMonotonic != 5*time.Second {
		t.Errorf("monotonic timestamps read as %v and %v, want 6s and 5s", full[0].StateChangeMonotonic, full[0].ActiveEnterMonotonic)
	}
	w := briefWorld()
	brief, err := w.conn(time.Second, true).Brief(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	if len(brief) != len(names) {
		t.Fatalf("%d statuses for %d names", len(brief), len(names))
	}
	for k := range names {
		if k == 2 {
			continue // the fake's GetAll knows nothing of a unit it has not: checked below
		}
		if want := BriefOf(full[k]); !reflect.DeepEqual(brief[k], want) {
			t.Errorf("%s:\n brief %+v\n units %+v", names[k], brief[k], want)
		}
	}
	if brief[0].MainPID != 4242 || brief[0].MemoryCurrent != 1<<20 || !brief[0].JobPending || brief[0].InvocationID != "abcd" {
		t.Errorf("running unit read wrong: %+v", brief[0])
	}
	if brief[2].LoadState != "not-found" || brief[2].MemoryCurrent != Unknown || brief[2].UID != NoID {
		t.Errorf("unknown unit: %+v", brief[2])
	}
	if brief[1].Result != "success" || brief[1].MainPID != 0 || brief[0].Result != "" {
		t.Errorf("how a run ended is read of a unit that is down only: %+v / %+v", brief[1], brief[0])
	}
	asked := map[string]bool{}
	for _, a := range w.asked {
		asked[a] = true
		if strings.HasPrefix(a, "bm2@gone-0.service") || strings.HasPrefix(a, "bm2-a-restart.timer.MainPID") {
			t.Errorf("asked %s: not a loaded service", a)
		}
	}
	for a, want := range map[string]bool{
		"bm2@a-0.service.MainPID": true, "bm2@a-0.service.MemoryCurrent": true, "bm2@a-0.service.Result": false,
		"bm2@a-0.service.User": false, "bm2@a-1.service.MainPID": false, "bm2@a-1.service.Result": true,
		"bm2@a-1.service.InactiveEnterTimestamp": true, "bm2@a-0.service.InactiveEnterTimestamp": false,
	} {
		if asked[a] != want {
			t.Errorf("asked %s: %v, want %v", a, asked[a], want)
		}
	}
}

// A connection lost in the middle of a Brief read is made again, and the
// unit read again whole.
func TestBriefReconnects(t *testing.T) {
	w := briefWorld()
	cuts := 2
	w.lose = func(call string) bool {
		if (call == "service-property" || call == "list-names") && cuts > 0 {
			cuts--
			return true
		}
		return false
	}
	st, err := w.conn(5*time.Second, true).Brief(context.Background(), []string{"bm2@a-0.service"})
	if err != nil {
		t.Fatal(err)
	}
	if st[0].MainPID != 4242 || st[0].ActiveState != "active" {
		t.Fatalf("%+v", st[0])
	}
	if cuts != 0 || w.dials < 3 {
		t.Fatalf("cuts left %d, dials %d", cuts, w.dials)
	}
}

// An answer that is not one unit per name is an error, not a misread.
func TestBriefRefusesAShortList(t *testing.T) {
	w := briefWorld()
	c := &Conn{what: "fake", dial: func(ctx context.Context) (manager, error) {
		return shortList{&fakeConn{w: w}}, nil
	}, retry: func() bool { return false }, window: time.Second}
	if _, err := c.Brief(context.Background(), []string{"bm2@a-0.service", "bm2@a-1.service"}); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("%v", err)
	}
}

type shortList struct{ *fakeConn }

func (s shortList) ListUnitsByNamesContext(ctx context.Context, names []string) ([]sddbus.UnitStatus, error) {
	l, err := s.fakeConn.ListUnitsByNamesContext(ctx, names)
	return l[:1], err
}

// A unit that still runs though its file is gone (or masked) has its run
// read: systemd keeps it until it stops.
func TestBriefReadsARunningUnitWithoutItsFile(t *testing.T) {
	w := briefWorld()
	w.units["bm2@a-0.service"]["LoadState"] = "not-found"
	st, err := w.conn(time.Second, true).Brief(context.Background(), []string{"bm2@a-0.service"})
	if err != nil {
		t.Fatal(err)
	}
	if s := st[0]; s.MainPID != 4242 || s.InvocationID != "abcd" || s.ActiveEnter.IsZero() || s.MemoryCurrent != 1<<20 {
		t.Errorf("a running not-found unit: %+v", s)
	}
	if b := BriefOf(Status{Name: "x.service", LoadState: "masked", ActiveState: "active", MainPID: 7}); b.MainPID != 7 {
		t.Errorf("BriefOf drops a running masked unit's run: %+v", b)
	}
}

// A restart between the reads of one unit (Gets, not one answer) would
// mix two runs: Brief reads the unit again, and what it says is one run.
func TestBriefReadsOneRun(t *testing.T) {
	w := briefWorld()
	restarted := false
	w.lose = func(call string) bool {
		if call == "service-property" && !restarted {
			restarted = true // the unit restarts while it is read: a new run, a new process
			w.units["bm2@a-0.service"]["InvocationID"] = []byte{0xee}
			w.types["bm2@a-0.service/Service"]["MainPID"] = uint32(5151)
		}
		return false
	}
	st, err := w.conn(time.Second, true).Brief(context.Background(), []string{"bm2@a-0.service"})
	if err != nil {
		t.Fatal(err)
	}
	if s := st[0]; s.InvocationID != "ee" || s.MainPID != 5151 {
		t.Errorf("mixed runs: InvocationID %s with pid %d", s.InvocationID, s.MainPID)
	}
}
