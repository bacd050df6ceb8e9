package config

import (
	"strings"
	"testing"
)

// The slice's TasksMax=: 512 per instance and the surge by default, or
// tasks_max when larger, or slice_tasks_max as written; out of range is
// an error naming the key.
func TestSliceTasksMax(t *testing.T) {
	for _, c := range []struct {
		extra string
		want  int
	}{
		{"", 512 * 5},
		{"[resources]\ntasks_max = 64\n", 512 * 5},
		{"[resources]\ntasks_max = 1000\n", 1000 * 5},
		{"[resources]\ntasks_max = 4194304\n", 4194304},
		{"[resources]\nslice_tasks_max = 300\n", 300},
	} {
		p, err := Parse("/etc/bm2/api.toml", []byte("name = \"api\"\nscript = \"s.js\"\ncwd = \"/srv/api\"\ninstances = 4\nport = 3000\n"+c.extra), Options{})
		if err != nil {
			t.Fatalf("%q: %v", c.extra, err)
		}
		if got := p.SliceTasksMax(); got != c.want {
			t.Errorf("%q: SliceTasksMax = %d, want %d", c.extra, got, c.want)
		}
	}
	_, err := Parse("/etc/bm2/api.toml", []byte("name = \"api\"\nscript = \"s.js\"\ncwd = \"/srv/api\"\nport = 3000\n[resources]\nslice_tasks_max = 0\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "/etc/bm2/api.toml:6") || !strings.Contains(err.Error(), "resources.slice_tasks_max") {
		t.Errorf("slice_tasks_max = 0: %v", err)
	}
}
