package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Discover reads the files of many directories in parallel, yet reports
// exactly what reading them one by one does: sources by name, masks,
// shadows and errors in search-path order, a directory's error between
// the files of the directories around it.
func TestDiscoverOrderWithManyFiles(t *testing.T) {
	root := t.TempDir()
	d1, notDir, d3 := filepath.Join(root, "d1"), filepath.Join(root, "file"), filepath.Join(root, "d3")
	for _, d := range []string{d1, d3} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(notDir, nil, 0o644)
	write := func(dir, name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var wantErrs, wantMasked, wantShadow []string
	for i := range 150 {
		name := fmt.Sprintf("p%03d", i)
		switch i % 10 {
		case 3:
			write(d1, name+".toml", "") // a mask
			wantMasked = append(wantMasked, filepath.Join(d1, name+".toml"))
		case 5:
			if err := syscall.Mkfifo(filepath.Join(d1, name+".toml"), 0o644); err != nil {
				t.Fatal(err)
			}
			wantErrs = append(wantErrs, filepath.Join(d1, name+".toml"))
		default:
			write(d1, name+".toml", "name = \""+name+"\"\n")
		}
		write(d3, name+".toml", "x") // every one hidden by d1's
		wantShadow = append(wantShadow, filepath.Join(d3, name+".toml"))
	}
	write(d1, "Bad.toml", "x") // sorts first
	wantErrs = append([]string{filepath.Join(d1, "Bad.toml")}, wantErrs...)
	wantErrs = append(wantErrs, notDir)
	write(d3, "Zed.toml", "x")
	wantErrs = append(wantErrs, filepath.Join(d3, "Zed.toml"))

	f := Discover([]string{d1, notDir, d3})
	if len(f.Sources) != 120 {
		t.Fatalf("%d sources, want 120", len(f.Sources))
	}
	for i := 1; i < len(f.Sources); i++ {
		if f.Sources[i-1].Name() >= f.Sources[i].Name() {
			t.Fatalf("sources out of order: %s before %s", f.Sources[i-1].Path, f.Sources[i].Path)
		}
	}
	for _, s := range f.Sources {
		if string(s.Data) != "name = \""+s.Name()+"\"\n" {
			t.Fatalf("%s read as %q", s.Path, s.Data)
		}
	}
	if fmt.Sprint(f.Masked) != fmt.Sprint(wantMasked) || fmt.Sprint(f.Shadow) != fmt.Sprint(wantShadow) {
		t.Fatalf("masked %v\nshadow %v", f.Masked, f.Shadow)
	}
	if len(f.Errors) != len(wantErrs) {
		t.Fatalf("errors %v, want about %v", f.Errors, wantErrs)
	}
	for i, err := range f.Errors {
		if !strings.Contains(err.Error(), wantErrs[i]) {
			t.Errorf("error %d is %q, want one about %s", i, err, wantErrs[i])
		}
	}
}
