package steer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pin root or project directory another user could have planted (a
// directory anyone may write into, a link) is refused before anything is
// pinned or unpinned there: on a bpffs mounted without mode=0700 any user
// may create /sys/fs/bpf/bm2 or a link under it.
func TestStoreRefusesDirectoriesNotItsOwn(t *testing.T) {
	root := t.TempDir()
	pins := filepath.Join(root, "bm2")
	if err := os.Mkdir(pins, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(pins, 0o777); err != nil {
		t.Fatal(err)
	}
	s := Store{Pins: pins}
	if _, _, err := s.Group("api", 3000); err == nil || !strings.Contains(err.Error(), "that only it may write") {
		t.Fatalf("a pin root of mode 0777: %v", err)
	}
	if err := os.Chmod(pins, 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(pins, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(other, pinProg)
	if err := os.WriteFile(keep, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(pins, "api")); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("api"); err == nil {
		t.Error("Remove through a link to another project's directory succeeded")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the other project's pin is gone: %v", err)
	}
	if _, _, err := s.Group("api", 3000); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Group through a link: %v", err)
	}
}
