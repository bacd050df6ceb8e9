package config

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// readFile reads the whole file whatever size stat gave (the file may have
// grown since), and reports errors as os.ReadFile does.
func TestReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.toml")
	data := bytes.Repeat([]byte("name = \"a\"\n"), 1000)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{0, 1, int64(len(data)), int64(len(data)) + 100} {
		got, err := readFile(p, size, true)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: %d bytes, %v", size, len(got), err)
		}
	}
	if _, err := readFile(filepath.Join(t.TempDir(), "none"), 0, true); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if _, err := readFile(link, 0, false); !errors.Is(err, unix.ELOOP) {
		t.Fatalf("O_NOFOLLOW through a link: %v", err)
	}
	if got, err := readFile(link, 0, true); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("through a link: %d bytes, %v", len(got), err)
	}
}
