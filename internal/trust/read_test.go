package trust

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

// TestRead is who a file speaks for: whoever could have changed what was
// read, through the file, a directory above it or a link on the way.
func TestRead(t *testing.T) {
	testutil.Root(t)
	base := t.TempDir() // root's, 0700
	mk := func(t *testing.T) (dir, file string) {
		dir = filepath.Join(base, strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		file = filepath.Join(dir, "bm2.toml")
		if err := os.WriteFile(file, []byte("name = \"api\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir, file
	}
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func(t *testing.T, path string) File {
		t.Helper()
		f, err := Read(path, db)
		if err != nil {
			t.Fatal(err)
		}
		if string(f.Data) != "name = \"api\"\n" {
			t.Fatalf("read %q", f.Data)
		}
		return f
	}

	t.Run("root's", func(t *testing.T) {
		_, file := mk(t)
		if f := read(t, file); f.Speaker() != 0 || f.Path != file || f.UID != 0 {
			t.Fatalf("%+v", f)
		}
	})
	t.Run("the owner's file", func(t *testing.T) {
		_, file := mk(t)
		must(t, os.Chown(file, alice, alice))
		if f := read(t, file); f.Speaker() != alice || f.UID != alice {
			t.Fatalf("%+v", f)
		}
	})
	t.Run("root's file in a user's directory", func(t *testing.T) {
		dir, file := mk(t)
		must(t, os.Chown(dir, alice, alice))
		if f := read(t, file); f.Speaker() != alice || f.UID != 0 {
			t.Fatalf("a file in alice's directory is alice's to replace: %+v", f)
		}
	})
	t.Run("two users", func(t *testing.T) {
		dir, file := mk(t)
		must(t, os.Chown(dir, bob, bob))
		must(t, os.Chown(file, alice, alice))
		if f := read(t, file); f.Speaker() != Nobody || !reflect.DeepEqual(f.Writers, []int{alice, bob}) || !strings.Contains(f.Why(), "uids 1000, 1001") {
			t.Fatalf("%+v %s", f, f.Why())
		}
	})
	t.Run("directory anyone may write", func(t *testing.T) {
		dir, file := mk(t)
		must(t, os.Chown(file, alice, alice))
		must(t, os.Chmod(dir, 0o777))
		if f := read(t, file); f.Speaker() != Nobody || !strings.Contains(f.Why(), "is writable by every user (mode 0777)") {
			t.Fatalf("%+v %s", f, f.Why())
		}
	})
	t.Run("sticky directory", func(t *testing.T) {
		dir, file := mk(t)
		must(t, os.Chown(file, alice, alice))
		must(t, syscall.Chmod(dir, 0o1777))
		if f := read(t, file); f.Speaker() != alice {
			t.Fatalf("in a sticky directory only the file's owner may replace it: %+v", f)
		}
	})
	t.Run("private group", func(t *testing.T) {
		dir, file := mk(t)
		must(t, os.Chown(dir, alice, alice))
		must(t, os.Chown(file, alice, alice))
		must(t, os.Chmod(dir, 0o775))
		must(t, os.Chmod(file, 0o664))
		if f := read(t, file); f.Speaker() != alice {
			t.Fatalf("alice's private group is alice's alone: %+v", f)
		}
	})
	t.Run("shared group", func(t *testing.T) {
		_, file := mk(t)
		must(t, os.Chown(file, alice, 999))
		must(t, os.Chmod(file, 0o664))
		if f := read(t, file); f.Speaker() != Nobody || !strings.Contains(f.Why(), "the file is writable by its group, gid 999") {
			t.Fatalf("%+v %s", f, f.Why())
		}
	})
	t.Run("a user's link to root's file", func(t *testing.T) {
		dir, file := mk(t)
		sub := filepath.Join(dir, "sub")
		must(t, os.Mkdir(sub, 0o755))
		link := filepath.Join(sub, "bm2.toml")
		must(t, os.Symlink("../bm2.toml", link))
		must(t, os.Lchown(link, bob, bob))
		f := read(t, link)
		if f.Speaker() != bob || f.Path != file || f.UID != 0 {
			t.Fatalf("bob's link decides what is read: %+v", f)
		}
	})
	t.Run("root's link", func(t *testing.T) {
		dir, file := mk(t)
		link := filepath.Join(dir, "abs.toml")
		must(t, os.Symlink(file, link))
		if f := read(t, link); f.Speaker() != 0 || f.Path != file {
			t.Fatalf("%+v", f)
		}
	})
	t.Run("linked directory", func(t *testing.T) {
		dir, _ := mk(t)
		home := filepath.Join(dir, "home")
		must(t, os.Mkdir(home, 0o755))
		must(t, os.Chown(home, alice, alice))
		must(t, os.WriteFile(filepath.Join(home, "bm2.toml"), []byte("name = \"api\"\n"), 0o644))
		link := filepath.Join(dir, "srv")
		must(t, os.Symlink(home, link))
		if f := read(t, filepath.Join(link, "bm2.toml")); f.Speaker() != alice || f.Path != filepath.Join(home, "bm2.toml") {
			t.Fatalf("%+v", f)
		}
	})
	t.Run("loop", func(t *testing.T) {
		dir, _ := mk(t)
		must(t, os.Symlink("b", filepath.Join(dir, "a")))
		must(t, os.Symlink("a", filepath.Join(dir, "b")))
		if _, err := Read(filepath.Join(dir, "a"), db); err == nil || !strings.Contains(err.Error(), "too many levels") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		dir, _ := mk(t)
		fifo := filepath.Join(dir, "fifo.toml")
		must(t, syscall.Mkfifo(fifo, 0o644))
		done := make(chan error, 1)
		go func() { _, err := Read(fifo, db); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("err %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("reading a FIFO hung")
		}
	})
	t.Run("missing", func(t *testing.T) {
		dir, _ := mk(t)
		if _, err := Read(filepath.Join(dir, "none.toml"), db); !os.IsNotExist(err) {
			t.Fatalf("err %v", err)
		}
	})
}
