package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The bench installs bm2 with installScript: from a copy of exactly the
// files the Makefile says install-files reads. Run here into a DESTDIR,
// with stand-ins for the binaries, it must install every file make
// install does; a file install-files reads that the list lacks fails it.
func TestInstallScript(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"bm2", "bm2-generator", "bm2-probe"} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dest := filepath.Join(tmp, "root")
	out, err := exec.Command("bash", "-c", installScript(repo, bin, filepath.Join(tmp, "src"), dest)).CombinedOutput()
	if err != nil {
		t.Fatalf("the bench's install step failed: %v\n%s", err, out)
	}
	for _, f := range []string{
		"usr/bin/bm2", "usr/lib/bm2/bm2-probe", "usr/lib/systemd/system-generators/bm2-generator",
		"usr/lib/systemd/system/bm2@.service", "usr/lib/systemd/user/bm2@.service",
		"usr/lib/sysusers.d/bm2.conf", "usr/lib/systemd/catalog/bm2.catalog",
		"usr/share/bash-completion/completions/bm2",
	} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("not installed: /%s", f)
		}
	}
}
