package relay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Verdicts keeps the reusePort probe's latest verdict on each instance:
// one file per instance, named by its id ("api-0"), in a directory of the
// scope's alone (layout.Layout.VerdictDir: /run/bm2/verdicts, 0700 root).
// The probe puts each verdict there as well as logging it; the waits of
// bm2 serve, start and reload read it the moment it is written, where the
// journal would show it only at their next read of it (package control).
//
// A file is a spool file: the verdict's entry as journal.Journald sends it,
// written through safefs.Write, and read back with every check the
// drainer makes (a regular file of the owner's with one link, not through
// a link, at most MaxFileSize bytes, an event's fields only) and one
// more: it names the instance it is named for. The journal's _UID is the
// file's owner, and its time the file's modification time.
type Verdicts struct{ Spool }

// NewVerdicts is the verdicts' directory of scope, owned by its UID.
func NewVerdicts(scope layout.Layout) Verdicts {
	return Verdicts{Spool{Dir: scope.VerdictDir(), Owner: scope.UID}}
}

// Put writes e as the latest verdict on its instance.
func (v Verdicts) Put(e journal.Event) error {
	if !isInstance(e.Instance) {
		return fmt.Errorf("verdict %s: %q is not an instance", e.Kind, e.Instance)
	}
	if err := v.check(); err != nil {
		return err
	}
	data, err := encode(journal.EventEntry(e))
	if err != nil {
		return err
	}
	return safefs.Write(filepath.Join(v.Dir, e.Instance), data, 0o600)
}

// Get reads the latest verdict on instance; ok is false when there is
// none (no file, no directory). A file that is not a verdict bm2 wrote on
// that instance is an error, and no verdict.
func (v Verdicts) Get(instance string) (ev journal.Event, ok bool, err error) {
	if !isInstance(instance) {
		return journal.Event{}, false, fmt.Errorf("%q is not an instance", instance)
	}
	if err := v.check(); err != nil {
		if errors.Is(err, errNoSpool) {
			return journal.Event{}, false, nil
		}
		return journal.Event{}, false, err
	}
	entry, written, err := v.readFile(instance)
	if errors.Is(err, fs.ErrNotExist) {
		return journal.Event{}, false, nil
	}
	if err != nil {
		return journal.Event{}, false, err
	}
	uid := strconv.Itoa(v.Owner)
	entry[journal.FieldUID] = uid
	entry[journal.FieldRealtime] = strconv.FormatInt(written.UnixMicro(), 10)
	ev, ok = journal.DecodeFrom(entry, uid)
	if !ok || ev.Instance != instance {
		return journal.Event{}, false, fmt.Errorf("%s: not a verdict on %s (%s is %q)",
			filepath.Join(v.Dir, instance), instance, journal.FieldInstance, ev.Instance)
	}
	return ev, true, nil
}

// Forget removes the verdicts on every instance of project (bm2 delete):
// a project registered later under this name starts without them. Only
// files named for one of its instances go ("api-0", "api-surge"; not
// "api-x-0", project api-x's); a directory that is not the scope's alone
// is left as it is, and said.
func (v Verdicts) Forget(project string) error {
	if err := v.check(); err != nil {
		if errors.Is(err, errNoSpool) {
			return nil
		}
		return err
	}
	es, err := os.ReadDir(v.Dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range es {
		n := e.Name()
		if p, _, ok := units.ParseInstance(n); ok && p == project && isInstance(n) {
			errs = append(errs, safefs.Remove(filepath.Join(v.Dir, n)))
		}
	}
	return errors.Join(errs...)
}

// isInstance tells whether id names an instance of a project bm2 could
// have ("api-0", "api-surge"): a file name in the directory, never a path.
func isInstance(id string) bool {
	project, i, ok := units.ParseInstance(id)
	return ok && config.ValidName(project) && id == units.InstanceID(project, i)
}
