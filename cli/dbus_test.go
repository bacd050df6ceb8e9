package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

func TestDBusErrors(t *testing.T) {
	denied := dbus.Error{Name: "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", Body: []any{"Interactive authentication required."}}
	err := dbusErr("stop bm2-api.target", fmt.Errorf("call: %w", denied))
	if ExitCode(err) != ExitFailure || hint(err) != "managing system services needs root: run the command again with sudo" ||
		err.Error() != "stop bm2-api.target: permission denied: call: Interactive authentication required." {
		t.Fatalf("%v / %q / %d", err, hint(err), ExitCode(err))
	}
	gone := &dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown", Body: []any{"The name is not activatable"}}
	if err := dbusErr("reload", gone); ExitCode(err) != ExitNoSystemd {
		t.Fatalf("%v: %d", err, ExitCode(err))
	}
	if err := dbusErr("reload", dbus.ErrClosed); ExitCode(err) != ExitNoSystemd {
		t.Fatalf("%v: %d", err, ExitCode(err))
	}
	if n := dbusErrorName(dbus.Error{Name: "org.freedesktop.systemd1.NoSuchUnit"}); n != "org.freedesktop.systemd1.NoSuchUnit" {
		t.Fatal(n)
	}
	if n := dbusErrorName(errors.New("plain")); n != "" {
		t.Fatal(n)
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
	if !isService("bm2@api-0.service") || isService("bm2-api.target") || isService(".service") {
		t.Fatal("isService")
	}
}

// On a host without systemd (like the one unit tests run on), connecting
// fails quickly and says systemd is not reachable.
func TestConnectWithoutSystemd(t *testing.T) {
	for _, sock := range []string{"/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/run/systemd/private"} {
		if _, err := os.Stat(sock); err == nil {
			t.Skipf("%s exists: this host may run systemd", sock)
		}
	}
	if os.Getenv("DBUS_SYSTEM_BUS_ADDRESS") != "" {
		t.Skip("DBUS_SYSTEM_BUS_ADDRESS is set")
	}
	start := time.Now()
	sd, err := ConnectSystemd(context.Background())
	if err == nil {
		sd.Close()
		t.Fatal("connected")
	}
	if ExitCode(err) != ExitNoSystemd || !strings.HasPrefix(err.Error(), "systemd is not reachable: connect to the system bus: ") {
		t.Fatalf("%v (exit %d)", err, ExitCode(err))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}
