package scope

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAccountingGap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string // under the cgroup root
		want  string            // "" or a part of the sentence
	}{
		{"legacy", map[string]string{"memory/tasks": ""}, "cgroup v1 (the legacy hierarchy)"},
		{"hybrid", map[string]string{"unified/cgroup.controllers": ""}, "cgroup v1 (the hybrid hierarchy)"},
		{"v2, nothing delegated", map[string]string{
			"cgroup.controllers": "cpu memory pids",
			"user.slice/user-1000.slice/user@1000.service/cgroup.controllers": "pids",
		}, "MEM and CPU are unknown in user scope on this host: systemd does not delegate the memory and cpu controller to user@1000.service"},
		{"v2, no memory", map[string]string{
			"cgroup.controllers": "cpu memory pids",
			"user.slice/user-1000.slice/user@1000.service/cgroup.controllers": "cpu pids",
		}, "MEM is unknown in user scope on this host: systemd does not delegate the memory controller"},
		{"v2, delegated", map[string]string{
			"cgroup.controllers": "cpu memory pids",
			"user.slice/user-1000.slice/user@1000.service/cgroup.controllers": "cpu memory pids",
		}, ""},
		{"v2, no manager", map[string]string{"cgroup.controllers": "cpu memory pids"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, data := range tc.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := accountingGap(root, 1000)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("accountingGap = %q, want %q", got, tc.want)
			}
		})
	}
}
