package confine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/units"
)

// The template's sandbox and the drop-in's account and overrides, in
// order, and nothing else (no ExecStart=, no Environment=).
func TestProperties(t *testing.T) {
	tmpl, err := units.StaticFile("bm2@.service")
	if err != nil {
		t.Fatal(err)
	}
	dropIn := []byte("[Unit]\nDescription=x\n[Service]\nUser=bm2-api\nDynamicUser=yes\nExecStart=/usr/lib/bm2/bm2-probe run node -- node s.js\n" +
		"Environment=\"SECRET=x\"\nProtectHome=read-only\nReadWritePaths=-/srv/100%%/data\n")
	props, err := Properties(tmpl, dropIn)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(props, "\n")
	for _, want := range []string{"NoNewPrivileges=yes", "ProtectSystem=strict", "SystemCallFilter=@system-service", "SystemCallFilter=~@privileged",
		"CapabilityBoundingSet=", "PrivateUsers=yes", "User=bm2-api", "DynamicUser=yes", "ReadWritePaths=-/srv/100%/data", "PrivateNetwork=yes",
		"SystemCallFilter=~bind listen"} {
		if !strings.Contains("\n"+got+"\n", "\n"+want+"\n") {
			t.Errorf("no %s in:\n%s", want, got)
		}
	}
	// Binds are refused after the instance's own filter, which may be a
	// list of what is allowed: a later ~ takes bind and listen out of it.
	if strings.LastIndex(got, "SystemCallFilter=") != strings.Index(got, "SystemCallFilter=~bind listen") {
		t.Errorf("~bind listen is not the last SystemCallFilter=:\n%s", got)
	}
	for _, not := range []string{"ExecStart", "Environment", "ExecStopPost", "RuntimeDirectory", "Description", "Restart"} {
		if strings.Contains(got, not+"=") {
			t.Errorf("%s passed on:\n%s", not, got)
		}
	}
	// The drop-in's ProtectHome= comes after the template's.
	if strings.Index(got, "ProtectHome=yes") > strings.Index(got, "ProtectHome=read-only") {
		t.Errorf("order:\n%s", got)
	}
	if _, err := Properties([]byte("[Service]\nReadOnlyPaths=%h/x\n")); err == nil {
		t.Error("a specifier was passed on")
	}
}

// Run hands systemd-run the properties and the program, and turns its
// 203/EXEC into a permission error.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "systemd-run")
	log := filepath.Join(dir, "args")
	os.WriteFile(fake, []byte("#!/bin/sh\nfor a; do echo \"$a\"; done > "+log+"\necho v24.1.0\ncase \"$*\" in *gone*) exit 203;; esac\n"), 0o755)
	out, err := Run(context.Background(), []string{"User=alice", "ProtectSystem=strict"}, Options{Command: fake}, "/home/alice/node", "--version")
	if err != nil || out != "v24.1.0\n" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	data, _ := os.ReadFile(log)
	args := strings.Split(strings.TrimSpace(string(data)), "\n")
	joined := strings.Join(args, " ")
	if !strings.Contains(joined, "--wait --pipe") || !strings.Contains(joined, "-p User=alice -p ProtectSystem=strict -- /home/alice/node --version") ||
		strings.Contains(joined, "--user") {
		t.Errorf("systemd-run %s", joined)
	}
	_, err = Run(context.Background(), nil, Options{Command: fake, User: true, RuntimeDir: "/run/user/1000"}, "/gone", "--version")
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("203/EXEC: %v", err)
	}
	data, _ = os.ReadFile(log)
	if !strings.HasPrefix(string(data), "--user\n") {
		t.Errorf("user scope: %s", data)
	}
}

// A run on an instance's behalf gets its slice and its limits too, so
// that it cannot step outside the project's TasksMax or memory.
func TestPropertiesKeepTheLimits(t *testing.T) {
	props, err := Properties([]byte("[Service]\nSlice=bm2-api.slice\nTasksMax=64\nMemoryMax=300M\nExecStart=/bin/true\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{"Slice=bm2-api.slice", "TasksMax=64", "MemoryMax=300M"}, Extra...)
	if strings.Join(props, "\n") != strings.Join(want, "\n") {
		t.Fatalf("properties %q, want %q", props, want)
	}
}
