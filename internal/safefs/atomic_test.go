package safefs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndSetsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.toml")
	if err := Write(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(data) != "two" || st.Mode().Perm() != 0o644 {
		t.Fatalf("%q %v", data, st.Mode())
	}
	if _, err := os.Lstat(tempName(p)); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
}

// The mode is the one asked for, whatever the umask.
func TestWriteIgnoresUmask(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x")
	if err := Write(p, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v", st.Mode())
	}
}

// A symlink planted at the temporary name is neither followed nor written
// through: the target it points at stays untouched.
func TestWriteNeverFollowsPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	p := filepath.Join(dir, "out")
	if err := os.Symlink(victim, tempName(p)); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep" {
		t.Fatalf("victim now %q", data)
	}
	if st, _ := os.Lstat(p); !st.Mode().IsRegular() {
		t.Fatalf("out is %v", st.Mode())
	}
}

// A stale temporary file from an interrupted run does not block the next.
func TestWriteReplacesStaleTemp(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(tempName(p), []byte("stale"), 0o600)
	if err := Write(p, []byte("fresh"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); string(data) != "fresh" {
		t.Fatalf("%q", data)
	}
}

func TestWriteFailsInMissingDir(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "f"), nil, 0o644); err == nil {
		t.Fatal("wrote into a directory that does not exist")
	}
}

func TestBatchAndSymlink(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	var b Batch
	if err := b.Write(filepath.Join(dir, "d", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Symlink("../f", filepath.Join(dir, "d", "l")); err != nil {
		t.Fatal(err)
	}
	if err := b.Symlink("../g", filepath.Join(dir, "d", "l")); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if target, _ := os.Readlink(filepath.Join(dir, "d", "l")); target != "../g" {
		t.Fatalf("link -> %q", target)
	}
	if err := Symlink("x", filepath.Join(dir, "l2")); err != nil {
		t.Fatal(err)
	}
	if err := Remove(filepath.Join(dir, "l2")); err != nil {
		t.Fatal(err)
	}
	if err := Remove(filepath.Join(dir, "l2")); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
}

func TestCreateExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mark")
	first, err := CreateExclusive(p, []byte("one\n"), 0o644)
	if err != nil || !first {
		t.Fatalf("%v %v", first, err)
	}
	again, err := CreateExclusive(p, []byte("two\n"), 0o644)
	if err != nil || again {
		t.Fatalf("%v %v", again, err)
	}
	if data, _ := os.ReadFile(p); string(data) != "one\n" {
		t.Fatalf("%q", data)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".#*")); len(m) != 0 {
		t.Fatalf("left %v", m)
	}
}

// CreateAt creates a new file with its content and mode, and refuses (EEXIST)
// to open, replace or follow whatever is at the name already.
func TestCreateAt(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if err := CreateAt(d.Fd(), dir, "sub/f", []byte("one"), 0o666); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(dir, "sub", "f"))
	if data, _ := os.ReadFile(filepath.Join(dir, "sub", "f")); string(data) != "one" || st.Mode().Perm() != 0o666 {
		t.Fatalf("%q %v (the mode whatever the umask)", data, st.Mode())
	}
	if err := CreateAt(d.Fd(), dir, "sub/f", []byte("two"), 0o644); !IsExist(err) {
		t.Fatalf("over an existing file: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "sub", "f")); string(data) != "one" {
		t.Fatalf("existing file now %q", data)
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	os.Symlink(victim, filepath.Join(dir, "planted"))
	os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling"))
	for _, name := range []string{"planted", "dangling"} {
		if err := CreateAt(d.Fd(), dir, name, []byte("new"), 0o644); !IsExist(err) {
			t.Fatalf("over the link %s: %v", name, err)
		}
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep" {
		t.Fatalf("victim now %q", data)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !os.IsNotExist(err) {
		t.Fatalf("created through the dangling link: %v", err)
	}
	if err := CreateAt(d.Fd(), dir, "missing/f", nil, 0o644); err == nil || IsExist(err) {
		t.Fatalf("in a missing directory: %v", err)
	}
	if err := SymlinkAt("sub/f", d.Fd(), dir, "l"); err != nil {
		t.Fatal(err)
	}
	if target, _ := os.Readlink(filepath.Join(dir, "l")); target != "sub/f" {
		t.Fatalf("link -> %q", target)
	}
	if err := SymlinkAt("other", d.Fd(), dir, "l"); !IsExist(err) {
		t.Fatalf("link over a link: %v", err)
	}
}
