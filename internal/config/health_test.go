package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/units"
)

// Instance i answers on health_port+i, the surge on health_port+instances;
// without health_port (fork mode) on its own port; without health_path
// nowhere.
func TestHealthPort(t *testing.T) {
	c := mustParse(t, "c", "name = \"c\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\ninstances = 3\nhealth_path = \"/h\"\nhealth_port = 4000\n", Options{})
	for i, want := range map[int]int{0: 4000, 2: 4002, units.Surge: 4003} {
		if got := c.HealthPort(i); got != want {
			t.Errorf("cluster HealthPort(%d) = %d, want %d", i, got, want)
		}
	}
	if r, ok := c.HealthPorts(); !ok || r != (PortRange{Lo: 4000, Hi: 4003}) {
		t.Errorf("cluster HealthPorts = %v %v: the surge's port belongs to the range", r, ok)
	}
	// The port fence lets each instance bind its health port too.
	if got := c.AllowedPorts(1); !slices.Equal(got, []int{3000, 4001}) {
		t.Errorf("AllowedPorts(1) = %v", got)
	}
	f := mustParse(t, "f", "name = \"f\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\ninstances = 3\nexec_mode = \"fork\"\nhealth_path = \"/h\"\n", Options{})
	if got := f.HealthPort(2); got != 3002 {
		t.Errorf("fork HealthPort(2) = %d, want its own port 3002", got)
	}
	if _, ok := f.HealthPorts(); ok {
		t.Error("fork mode without health_port holds health ports of its own")
	}
	if got := f.AllowedPorts(2); !slices.Equal(got, []int{3002}) {
		t.Errorf("fork AllowedPorts(2) = %v: the health port is its own port, once", got)
	}
	if f.Health != (Health{Path: "/h", Interval: DefaultHealthInterval, Timeout: DefaultHealthTimeout, Failures: DefaultHealthFailures}) {
		t.Errorf("defaults: %+v", f.Health)
	}
	n := mustParse(t, "n", "name = \"n\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\n", Options{})
	if n.HealthChecked() || n.HealthPort(0) != 0 || n.Health != (Health{}) {
		t.Errorf("no health_path, yet %+v", n.Health)
	}
}

// Another project's ports on the health range, or the health range on
// another project's, are a conflict that names health_port.
func TestHealthPortsConflict(t *testing.T) {
	api := mustParse(t, "api", "name = \"api\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\ninstances = 2\nhealth_path = \"/h\"\nhealth_port = 4000\n", Options{})
	web := mustParse(t, "web", "name = \"web\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 4002\n", Options{})
	err := CheckConflict(web, []*Project{api})
	var ce *ConflictError
	if !errors.As(err, &ce) || err.Error() != "port conflict: web port range 4002~4002 overlaps api 4000~4002 (health_port)" {
		t.Fatalf("CheckConflict = %v", err)
	}
	if err := CheckConflict(api, []*Project{web}); err == nil || err.Error() != "port conflict: api port range 4000~4002 (health_port) overlaps web 4002~4002" {
		t.Fatalf("CheckConflict the other way = %v", err)
	}
	// The generator's resolution: the name that sorts first keeps it.
	kept, refused := ResolveConflicts([]*Project{web, api})
	if len(kept) != 1 || kept[0].Name != "api" || len(refused) != 1 || refused[0].HolderBy != "health_port" {
		t.Fatalf("ResolveConflicts: kept %v, refused %v", kept, refused)
	}
	// Past the surge's port, nothing is held.
	free := mustParse(t, "free", "name = \"free\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 4003\n", Options{})
	if err := CheckConflict(free, []*Project{api}); err != nil {
		t.Fatalf("no overlap, got %v", err)
	}
}

// User scope: a health port below ip_unprivileged_port_start is refused
// like the port.
func TestHealthPortUserScope(t *testing.T) {
	_, err := Parse("/home/a/.config/bm2/u.toml", []byte("name = \"u\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\nhealth_path = \"/h\"\nhealth_port = 1500\n"),
		Options{User: &UserScope{Name: "a", MinPort: 2000}})
	if err == nil || !strings.Contains(err.Error(), "u.toml:6: health_port: 1500 is below net.ipv4.ip_unprivileged_port_start (2000)") {
		t.Fatalf("%v", err)
	}
}

// Marshal writes the health keys that differ from their defaults, and
// only with health_path; they come back the same.
func TestMarshalHealth(t *testing.T) {
	base := "name = \"h\"\nscript = \"a.js\"\ncwd = \"/srv/h\"\nport = 3000\nexec_mode = \"fork\"\n"
	for _, keys := range []string{
		"health_path = \"/healthz\"\n",
		"health_path = \"/healthz\"\nhealth_interval_ms = 1000\nhealth_timeout_ms = 250\nhealth_failures = 5\nhealth_port = 4000\n",
	} {
		p := mustParse(t, "h", base+keys, Options{})
		out := string(roundTrip(t, p, 1))
		var got strings.Builder
		for _, l := range strings.SplitAfter(out, "\n") {
			if strings.HasPrefix(l, "health_") {
				got.WriteString(l)
			}
		}
		if got.String() != keys {
			t.Errorf("Marshal wrote %q, want %q", got.String(), keys)
		}
	}
	// The defaults written out are not written back.
	p := mustParse(t, "h", base+"health_path = \"/\"\nhealth_interval_ms = 5000\nhealth_timeout_ms = 2000\nhealth_failures = 3\n", Options{})
	if out := string(roundTrip(t, p, 1)); strings.Contains(out, "health_interval_ms") || strings.Contains(out, "health_failures") {
		t.Errorf("defaults written:\n%s", out)
	}
}

func TestHealthSummary(t *testing.T) {
	c := mustParse(t, "c", "name = \"c\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\nhealth_path = \"/healthz\"\nhealth_port = 4000\n", Options{})
	if got, want := c.HealthSummary(), "GET /healthz on 127.0.0.1, port 4000+i, every 5s (timeout 2s); 3 failed in a row restart the instance"; got != want {
		t.Errorf("HealthSummary = %q, want %q", got, want)
	}
}
