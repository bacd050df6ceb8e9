package explain

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/identity"
)

// As root the check runs as the project's user; whoever cannot take that
// identity learns only what is missing.
func TestAccessAs(t *testing.T) {
	// Not t.TempDir: its parent is 0700, which no other user may enter.
	dir, err := os.MkdirTemp("", "bm2-access-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.js")
	if err := os.WriteFile(secret, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := identity.Identity{UID: 65534, GID: 65534}
	if identity.Self().UID == 65534 {
		other.UID = 65533
	}
	if err := AccessAs(other, filepath.Join(dir, "gone.js"), false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	err = AccessAs(other, secret, false)
	if identity.Self().UID == 0 && !errors.Is(err, fs.ErrPermission) {
		t.Errorf("another user's 0600 file, as root checking as %v: %v", other, err)
	}
	if identity.Self().UID != 0 && err != nil {
		t.Errorf("checked without root: %v, want nothing known", err)
	}
	if err := AccessAs(identity.Self(), dir, true); err != nil {
		t.Errorf("own dir: %v", err)
	}
}

// A FIFO in the script's place does not keep the check waiting for a
// writer.
func TestAccessAsFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "server.js")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- AccessAs(identity.Self(), fifo, false) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("AccessAs(FIFO) = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AccessAs blocks on a FIFO")
	}
}
