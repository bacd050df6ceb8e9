package generator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
)

// sourcesWithEnv are n projects with an [env] (so a private 0600 file in
// a 0700 directory too), on ports from base.
func sourcesWithEnv(n, base int) []config.Source {
	var srcs []config.Source
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		srcs = append(srcs, config.Source{Path: "/etc/bm2/" + name + ".toml",
			Data: []byte(project(name, base+i) + "instances = 3\n[env]\nK = \"v\"\n")})
	}
	return srcs
}

// checkOnDisk fails unless dir holds exactly files (content, mode, link
// target), plus the directories they are in.
func checkOnDisk(t *testing.T, dir string, files []File) {
	t.Helper()
	want := map[string]File{}
	for _, f := range files {
		want[f.Path] = f
	}
	seen := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		st, _ := os.Lstat(p)
		if d.IsDir() {
			if rel == PrivateDir && st.Mode().Perm() != 0o700 {
				t.Errorf("%s: mode %v, want 0700", rel, st.Mode().Perm())
			}
			return nil
		}
		f, ok := want[filepath.ToSlash(rel)]
		if !ok {
			t.Errorf("%s: not generated (left over?)", rel)
			return nil
		}
		seen++
		if f.Link != "" {
			if target, err := os.Readlink(p); err != nil || target != f.Link {
				t.Errorf("%s -> %q (%v), want -> %q", rel, target, err, f.Link)
			}
			return nil
		}
		data, _ := os.ReadFile(p)
		if !bytes.Equal(data, f.Data) || st.Mode() != f.Perm() {
			t.Errorf("%s: %v %q, want %v %q", rel, st.Mode(), data, f.Perm(), f.Data)
		}
		return nil
	})
	if seen != len(want) {
		t.Errorf("%d files on disk, want %d", seen, len(want))
	}
}

// Into the empty directory systemd provides, files are created in place;
// into a directory that holds an earlier run's units, each one is
// replaced. Either way the directory ends up holding exactly what
// Generate produced, with its modes.
func TestWriteFreshAndOverOld(t *testing.T) {
	res := Generate(sourcesWithEnv(20, 3000), testOptions)
	fresh := t.TempDir()
	if err := Write(fresh, res.Files); err != nil {
		t.Fatal(err)
	}
	checkOnDisk(t, fresh, res.Files)

	old := t.TempDir()
	if err := Write(old, Generate(sourcesWithEnv(20, 5000), testOptions).Files); err != nil {
		t.Fatal(err)
	}
	if err := Write(old, res.Files); err != nil {
		t.Fatal(err)
	}
	checkOnDisk(t, old, res.Files)
	if data, _ := os.ReadFile(filepath.Join(old, "bm2@p0-0.service.d", DropInName)); !strings.Contains(string(data), "BM2_APP_PORT=3000") {
		t.Fatalf("old drop-in not replaced:\n%s", data)
	}
}

// A name that exists after all in a fresh directory (the same path twice)
// is replaced, as in an old directory: the last file of that name wins.
func TestWriteSamePathTwice(t *testing.T) {
	dir := t.TempDir()
	files := []File{
		{Project: "a", Path: "x.d/f", Data: []byte("one")},
		{Project: "a", Path: "x.d/f", Data: []byte("two")},
		{Project: "a", Path: "l", Link: "one"},
		{Project: "a", Path: "l", Link: "two"},
	}
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	checkOnDisk(t, dir, []File{files[1], files[3]})
}

// Run writes exactly the files Generate gives for the same project files
// (it renders each project as it writes it, into a buffer it reuses for
// the next, smaller or larger), and only those: none of a broken project
// or of one refused for a port conflict.
func TestRunWritesWhatGenerateGives(t *testing.T) {
	etc, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	for i := range 40 {
		name := fmt.Sprintf("p%02d", i)
		body := project(name, 3000+10*i) + fmt.Sprintf("instances = %d\n", 1+i%5*2)
		switch i % 4 {
		case 1:
			body += "exec_mode = \"fork\"\n"
		case 2:
			body += fmt.Sprintf("restart_schedule = \"daily\"\nhealth_path = \"/\"\nhealth_port = %d\n[env]\nK = \"v\"\n", 20000+10*i)
		}
		writeProject(t, etc, name, body)
	}
	writeProject(t, etc, "broken", "name = \"broken\"\nport = 1\n")
	writeProject(t, etc, "zz", project("zz", 3000)) // p00's port
	env := Env{Getenv: func(k string) string {
		if k == "BM2_CONFIG_PATH" {
			return etc
		}
		return ""
	}, Log: &recorder{}, NumCPU: 2, Helper: DefaultHelper, Layout: systemScope()}
	if err := Run(context.Background(), []string{out}, env); !errors.Is(err, ErrSkipped) {
		t.Fatalf("Run = %v, want ErrSkipped (broken, zz)", err)
	}
	res := Generate(config.Discover([]string{etc}).Sources, Options{NumCPU: 2, Helper: DefaultHelper, OutDir: out, Layout: *systemScope()})
	if len(res.Projects) != 40 || len(res.Skipped) != 2 {
		t.Fatalf("%d projects, %d skipped", len(res.Projects), len(res.Skipped))
	}
	checkOnDisk(t, out, res.Files)
}
