package layout

import (
	"os"
	"strings"
	"testing"
)

func TestUserLayoutKeepsEverythingInTheHome(t *testing.T) {
	l := User(1001, "alice", "/home/alice")
	if !l.IsUser() || l.WantedBy != "default.target" {
		t.Fatalf("user layout %+v", l)
	}
	for what, p := range map[string]string{
		"config": l.ConfigDir, "state": l.StateDir, "lock": l.LockFile,
		"search path": strings.Join(l.SearchPath, ":"),
		"crash log":   l.CrashLogs.Path("api", "api-0"),
		"errored":     l.State().ErroredPath("api"),
		"notify":      l.NotifyDir,
	} {
		if !strings.HasPrefix(p, "/home/alice/.bm2/") {
			t.Errorf("%s is %s, outside ~/.bm2", what, p)
		}
	}
	if got := l.CrashLogs.Path("api", "api-0"); got != "/home/alice/.bm2/api/logs/api-0.crash.log" {
		t.Errorf("crash log %s, want the seed's ~/.bm2/<name>/logs/<name>-<i>.crash.log", got)
	}
	if l.PrivateSocket != "/run/user/1001/systemd/private" || l.GeneratorDir != "/run/user/1001/systemd/generator" {
		t.Errorf("runtime paths %s %s", l.PrivateSocket, l.GeneratorDir)
	}
	if l.Short("/home/alice/.bm2/projects") != "~/.bm2/projects" || l.Short("/etc/bm2") != "/etc/bm2" {
		t.Errorf("Short: %s %s", l.Short("/home/alice/.bm2/projects"), l.Short("/etc/bm2"))
	}
	if l.Systemctl != "systemctl --user" || System().Systemctl != "systemctl" {
		t.Error("systemctl prefixes")
	}
	// What the scopes' hints and messages say differs as data.
	sys := System()
	if l.Analyze != "systemd-analyze --user" || sys.Analyze != "systemd-analyze" ||
		l.JournalUnit != "journalctl --user-unit" || sys.JournalUnit != "journalctl -u" ||
		l.Sudo != "" || sys.Sudo != "sudo " || l.Owner != "you" || sys.Owner != "root" {
		t.Errorf("hint words: user %+v, system %+v", l, sys)
	}
	if l.RunStateDir != "/run/user/1001/bm2" || sys.RunStateDir != "/run/bm2" || sys.NotifyDir != "/var/lib/bm2/notify" {
		t.Errorf("run state %s %s, notify %s", l.RunStateDir, sys.RunStateDir, sys.NotifyDir)
	}
	// The relay's spool is on tmpfs, in either scope (bm2-probe@.service makes it).
	if sys.EventsDir != "/run/bm2/events" || l.EventsDir != "/run/user/1001/bm2/events" {
		t.Errorf("events dirs %s %s", sys.EventsDir, l.EventsDir)
	}
	// Where the health service's RuntimeDirectory=bm2/health/<name> is,
	// in either scope.
	if h, uh := sys.HealthDir("api"), l.HealthDir("api"); h != "/run/bm2/health/api" || uh != "/run/user/1001/bm2/health/api" {
		t.Errorf("health dirs %s %s", h, uh)
	}
}

func TestSystemLayout(t *testing.T) {
	l, err := ForUID(0)
	if err != nil {
		t.Fatal(err)
	}
	if l.IsUser() || l.ConfigDir != "/etc/bm2" || l.StateDir != "/var/lib/bm2" ||
		l.CrashLogs.Path("api", "api-0") != "/var/log/bm2/api/api-0.crash.log" || l.WantedBy != "multi-user.target" {
		t.Errorf("system layout %+v", l)
	}
}

func TestForUIDReadsThePasswordDatabase(t *testing.T) {
	// nobody (65534) has no home on Debian: refused with the reason.
	if _, err := ForUID(65534); err == nil || !strings.Contains(err.Error(), "no home directory") {
		if _, statErr := os.Stat("/etc/passwd"); statErr == nil {
			t.Errorf("ForUID(65534) = %v, want a refusal naming the missing home", err)
		}
	}
	if _, err := ForUID(2147483000); err == nil {
		t.Error("a UID without an entry got a layout")
	}
}

func TestUnprivilegedPortStart(t *testing.T) {
	if n := UnprivilegedPortStart(); n < 0 || n > 65536 {
		t.Errorf("ip_unprivileged_port_start %d", n)
	}
}
