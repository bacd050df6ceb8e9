package wait

import (
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/bm2dev/bm2/internal/safefs"
)

// WatchDir is what a wait for reusePort verdicts watches (Env.WatchVerdicts): a channel that receives (at most one value
// waiting) whenever a file is written or moved into dir.
func WatchDir(dir string) (<-chan struct{}, func()) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, func() {}
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, func() {}
	}
	ch := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				// A verdict is written under a temporary name and renamed
				// into place: the rename's Create of its own name is the
				// write, never the temporary file's events (a look then
				// would find nothing new).
				if strings.HasPrefix(filepath.Base(ev.Name), safefs.TempPrefix) {
					continue
				}
				if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Rename) {
					select {
					case ch <- struct{}{}:
					default:
					}
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return ch, func() { w.Close() }
}
