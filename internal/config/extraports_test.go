package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func mustParse(t *testing.T, name, doc string, opts Options) *Project {
	t.Helper()
	p, err := Parse("/etc/bm2/"+name+".toml", []byte(doc), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// An extra port is held like a port: another project's port on it, or
// its extra port on this project's range, is a conflict naming the key.
func TestExtraPortsConflict(t *testing.T) {
	api := mustParse(t, "api", "name = \"api\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\n[sandbox]\nextra_ports = [9229]\n", Options{})
	web := mustParse(t, "web", "name = \"web\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 9229\n", Options{})
	err := CheckConflict(web, []*Project{api})
	var ce *ConflictError
	if !errors.As(err, &ce) || err.Error() != "port conflict: web port range 9229~9229 overlaps api 9229~9229 ([sandbox] extra_ports)" {
		t.Fatalf("CheckConflict = %v", err)
	}
	if err := CheckConflict(api, []*Project{web}); err == nil || err.Error() != "port conflict: api port range 9229~9229 ([sandbox] extra_ports) overlaps web 9229~9229" {
		t.Fatalf("CheckConflict the other way = %v", err)
	}
	// Port ranges come first: the sentence users know.
	other := mustParse(t, "other", "name = \"other\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\n[sandbox]\nextra_ports = [9229]\n", Options{})
	if err := CheckConflict(other, []*Project{api}); err == nil || err.Error() != "port conflict: other port range 3000~3000 overlaps api 3000~3000" {
		t.Fatalf("CheckConflict of ranges = %v", err)
	}
	free := mustParse(t, "free", "name = \"free\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 9230\n", Options{})
	if err := CheckConflict(free, []*Project{api, web}); err != nil {
		t.Fatalf("no overlap, got %v", err)
	}
}

// Each instance may bind its own port and the extra ones.
func TestAllowedPorts(t *testing.T) {
	p := mustParse(t, "f", "name = \"f\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\ninstances = 3\nexec_mode = \"fork\"\n[sandbox]\nextra_ports = [9229, 9100]\n", Options{})
	if got := p.AllowedPorts(2); !slices.Equal(got, []int{3002, 9229, 9100}) {
		t.Errorf("AllowedPorts(2) = %v", got)
	}
	c := mustParse(t, "c", "name = \"c\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\ninstances = 3\n", Options{})
	if got := c.AllowedPorts(2); !slices.Equal(got, []int{3000}) {
		t.Errorf("cluster AllowedPorts(2) = %v", got)
	}
}

// User scope: an extra port below ip_unprivileged_port_start is refused
// like the port.
func TestExtraPortsUserScope(t *testing.T) {
	_, err := Parse("/home/a/.config/bm2/u.toml", []byte("name = \"u\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\n[sandbox]\nextra_ports = [9229, 80]\n"),
		Options{User: &UserScope{Name: "a", MinPort: 1024}})
	if err == nil || !strings.Contains(err.Error(), "u.toml:6: sandbox.extra_ports[1]: 80 is below net.ipv4.ip_unprivileged_port_start (1024)") {
		t.Fatalf("%v", err)
	}
}

// extra_ports is an array: a single number is refused with the file, the
// line and the key.
func TestExtraPortsNotAnArray(t *testing.T) {
	_, err := Parse("/etc/bm2/one.toml", []byte("name = \"one\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\n[sandbox]\nextra_ports = 9229\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "/etc/bm2/one.toml:6: sandbox.extra_ports: must be an array of integers, got an integer") {
		t.Fatalf("%v", err)
	}
}
