package wait

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/safefs"
)

// The verdict directory's watch says a verdict was written when it is
// renamed into place, not while its temporary file is written (a look then
// would find nothing new).
func TestWatchDirIgnoresTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	written, unwatch := WatchDir(dir)
	if written == nil {
		t.Fatal("no watch on a directory that exists")
	}
	defer unwatch()
	tmp := filepath.Join(dir, safefs.TempPrefix+"api-0")
	if err := os.WriteFile(tmp, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-written:
		t.Fatal("the temporary file's write was said as a verdict")
	case <-time.After(300 * time.Millisecond):
	}
	if err := os.Rename(tmp, filepath.Join(dir, "api-0")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-written:
	case <-time.After(10 * time.Second):
		t.Fatal("the verdict renamed into place was not said")
	}
}
