package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// --out files (bm2 gateway, bm2 export kube): written once, left alone
// when up to date, never tightened loose nor loosened tight, never
// through a symbolic link a user made, never read through a FIFO; as
// root, written as the owner of a user's directory, and a Secret never
// written there.
func TestWriteIfChanged(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "made", "api.yaml")
	if _, err := WriteIfChanged(file, []byte("a"), 0o644, "the manifests", WriteOptions{}); err == nil {
		t.Errorf("made a directory without Create")
	}
	if changed, err := WriteIfChanged(file, []byte("a"), 0o644, "the manifests", WriteOptions{Create: true}); err != nil || !changed {
		t.Fatalf("first write: %v %v", changed, err)
	}
	if changed, err := WriteIfChanged(file, []byte("a"), 0o644, "the manifests", WriteOptions{}); err != nil || changed {
		t.Fatalf("second write: %v %v", changed, err)
	}
	// An operator's tighter mode stays, through a rewrite too.
	os.Chmod(file, 0o640)
	if changed, err := WriteIfChanged(file, []byte("a"), 0o644, "the manifests", WriteOptions{}); err != nil || changed {
		t.Errorf("a narrowed mode made it write again: %v %v", changed, err)
	}
	if _, err := WriteIfChanged(file, []byte("b"), 0o644, "the manifests", WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o640 {
		t.Errorf("rewritten with %v, want 0640 kept", st.Mode().Perm())
	}
	// A Secret left readable by everyone gets its 0600 again.
	secret := filepath.Join(dir, "made", "api.secret.yaml")
	os.WriteFile(secret, []byte("s"), 0o644)
	os.Chmod(secret, 0o644)
	if changed, err := WriteIfChanged(secret, []byte("s"), 0o600, "the Secret", WriteOptions{Secret: true}); err != nil || !changed {
		t.Fatalf("loose Secret: %v %v", changed, err)
	}
	if st, _ := os.Stat(secret); st.Mode().Perm() != 0o600 {
		t.Errorf("Secret mode %v", st.Mode().Perm())
	}

	// A FIFO where the file goes: refused, not waited on.
	fifo := filepath.Join(dir, "made", "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteIfChanged(fifo, []byte("x"), 0o644, "the manifests", WriteOptions{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO: %v", err)
	}
	// A symbolic link at the name, and one on the way that a user made.
	target := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(target, []byte("precious"), 0o644)
	os.Symlink(target, filepath.Join(dir, "made", "link.yaml"))
	if _, err := WriteIfChanged(filepath.Join(dir, "made", "link.yaml"), []byte("x"), 0o644, "the manifests", WriteOptions{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("wrote through a symlink: %v", err)
	}
	away := filepath.Join(dir, "away")
	os.Symlink(filepath.Dir(target), away)
	if os.Geteuid() == 0 {
		os.Lchown(away, 65534, 65534)
	}
	if _, err := WriteIfChanged(filepath.Join(away, "victim"), []byte("x"), 0o644, "the manifests", WriteOptions{Create: true}); err == nil {
		t.Errorf("followed a user's directory symlink")
	}
	if _, err := WriteIfChanged(filepath.Join(away, "new.yaml"), []byte("x"), 0o644, "the manifests", WriteOptions{Create: true}); err == nil {
		t.Errorf("created a file through a user's directory symlink")
	}
	if got, _ := os.ReadFile(target); string(got) != "precious" {
		t.Errorf("victim changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(target), "new.yaml")); err == nil {
		t.Errorf("a file appeared beside the victim")
	}

	// As root: a user's directory.
	if os.Geteuid() != 0 {
		return
	}
	theirs := filepath.Join(dir, "theirs")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, 65534, 65534)
	if _, err := WriteIfChanged(filepath.Join(theirs, "api.yaml"), []byte("m"), 0o644, "the manifests", WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(theirs, "api.yaml"), &st); err != nil || st.Uid != 65534 {
		t.Errorf("written as uid %d in a directory of uid 65534 (%v)", st.Uid, err)
	}
	if _, err := WriteIfChanged(filepath.Join(theirs, "api.secret.yaml"), []byte("s"), 0o600, "the Secret", WriteOptions{Secret: true}); err == nil || !strings.Contains(err.Error(), "does not write a Secret into another user's directory") {
		t.Errorf("a Secret into a user's directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(theirs, "api.secret.yaml")); err == nil {
		t.Errorf("the Secret was written")
	}
}
