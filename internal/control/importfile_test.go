package control

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bm2.toml is written once, left alone when it is up to date, kept (with
// the difference shown) when it differs, and never written through a
// symbolic link, neither at its own name nor on the way.
func TestWriteImported(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bm2.toml")
	if res, _, err := WriteImported(file, []byte("a\nb\n"), 0o600, false, false, -1); err != nil || res != Written {
		t.Fatalf("first write: %v %v", res, err)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if res, _, err := WriteImported(file, []byte("a\nb\n"), 0o600, false, false, -1); err != nil || res != Unchanged {
		t.Fatalf("second write: %v %v", res, err)
	}
	res, old, err := WriteImported(file, []byte("a\nc\n"), 0o600, false, false, -1)
	if err != nil || res != Differs || string(old) != "a\nb\n" {
		t.Fatalf("differing write: %v %q %v", res, old, err)
	}
	if got, _ := os.ReadFile(file); string(got) != "a\nb\n" {
		t.Errorf("overwritten without force: %q", got)
	}
	if res, _, err := WriteImported(file, []byte("a\nc\n"), 0o600, true, false, -1); err != nil || res != Written {
		t.Fatalf("forced write: %v %v", res, err)
	}

	// A symbolic link where bm2.toml goes.
	target := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(target, []byte("precious"), 0o644)
	link := filepath.Join(dir, "sub")
	os.Mkdir(link, 0o755)
	os.Symlink(target, filepath.Join(link, "bm2.toml"))
	if _, _, err := WriteImported(filepath.Join(link, "bm2.toml"), []byte("x"), 0o644, true, false, -1); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("wrote through a symlink: %v", err)
	}
	// A symbolic link on the way that a user made.
	os.Symlink(filepath.Dir(target), filepath.Join(dir, "elsewhere"))
	if os.Geteuid() == 0 {
		os.Lchown(filepath.Join(dir, "elsewhere"), 65534, 65534) // a user's link
	}
	if _, _, err := WriteImported(filepath.Join(dir, "elsewhere", "victim"), []byte("x"), 0o644, true, false, -1); err == nil {
		t.Errorf("followed a directory symlink")
	}
	if got, _ := os.ReadFile(target); string(got) != "precious" {
		t.Errorf("victim changed: %q", got)
	}
	// A directory of another user, when the file came from this one.
	if os.Geteuid() == 0 {
		if _, _, err := WriteImported(filepath.Join(dir, "x.toml"), []byte("x"), 0o644, false, false, 12345); err == nil || !strings.Contains(err.Error(), "only into its owner's directories") {
			t.Errorf("wrote into a directory its owner does not own: %v", err)
		}
	}
}
