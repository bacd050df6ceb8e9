package account

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/units"
)

// What a run on the project's own account leaves in /run/bm2 once systemd
// 252 has removed its directory (a link to nothing in /run/private/bm2)
// goes before the next start, whatever its account; anything else stays.
func TestTidyRunDirs(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run", "bm2")
	private := filepath.Join(root, "run", "private", "bm2")
	for _, d := range []string{run, filepath.Join(private, "api-1"), filepath.Join(run, "api-2")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(name, to string) {
		if err := os.Symlink(to, filepath.Join(run, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("api-0", "../private/bm2/api-0")          // systemd's, its directory gone: the cause of 233/RUNTIME_DIRECTORY
	link("api-1", "../private/bm2/api-1")          // systemd's, its directory there: systemd moves it back itself
	link("api-3", filepath.Join(private, "api-3")) // absolute, directory gone
	link("api-4", "../elsewhere/api-4")            // not systemd's
	link("api-surge", "../private/bm2/api-surge")  // the surge's
	link("web-0", "../private/bm2/web-0")          // another project's
	l := layout.System()
	l.RunStateDir = run
	var said []string
	p := &config.Project{Name: "api", Instances: 5}
	TidyRunDirs(l, p, view.AllInstances(p), func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) })
	for name, want := range map[string]bool{"api-0": false, "api-1": true, "api-2": true, "api-3": false, "api-4": true, "api-surge": false, "web-0": true} {
		_, err := os.Lstat(filepath.Join(run, name))
		if got := err == nil; got != want {
			t.Errorf("%s kept %v, want %v (%v)", name, got, want, err)
		}
	}
	if len(said) > 0 {
		t.Errorf("reported: %q", said)
	}
}

// fakeAccounts is a user database: name -> uid.
type fakeAccounts map[string]int

func (f fakeAccounts) User(name string) (trust.Account, error) {
	if uid, ok := f[name]; ok {
		return trust.Account{Name: name, UID: uid, GID: uid}, nil
	}
	return trust.Account{}, errors.New("no such user")
}

func (f fakeAccounts) UserID(uid int) (trust.Account, error) {
	for n, u := range f {
		if u == uid {
			return trust.Account{Name: n, UID: u, GID: u}, nil
		}
	}
	return trust.Account{}, errors.New("no such uid " + strconv.Itoa(uid))
}
func (fakeAccounts) Group(string) (trust.Group, error)     { return trust.Group{}, errors.New("no") }
func (fakeAccounts) GroupID(int) (trust.Group, error)      { return trust.Group{}, errors.New("no") }
func (fakeAccounts) GroupIDs(trust.Account) ([]int, error) { return nil, nil }

// A project that changed accounts is told by its running instances'
// uid: named in the user database, or (a dynamic account systemd no
// longer lists) not the uid of the account it names now.
func TestOtherAccount(t *testing.T) {
	accts := trust.Accounts(fakeAccounts{"alice": 1001, "bm2-api": 61595})
	runs := func(uid uint32) []view.UnitStatus {
		return []view.UnitStatus{{Name: units.Instance("api", 0), MainPID: 12, UID: uid}, {Name: units.Instance("api", 1), UID: sysd.NoID}}
	}
	own := &config.Project{Name: "api"}
	alice := &config.Project{Name: "api", User: "alice"}
	for _, c2 := range []struct {
		p    *config.Project
		st   []view.UnitStatus
		want string
	}{
		{own, runs(61595), ""},
		{alice, runs(1001), ""},
		{alice, runs(61595), "bm2-api"},
		{own, runs(1001), "alice"},
		{alice, runs(61700), "uid 61700"}, // a dynamic uid no longer listed
		{own, runs(61700), "uid 61700"},   // not the uid bm2-api has
		{alice, runs(sysd.NoID), ""},      // nothing runs
	} {
		if got := Other(layout.System(), accts, c2.p, c2.st); got != c2.want {
			t.Errorf("%s running as %d: %q, want %q", c2.p.Account(), c2.st[0].UID, got, c2.want)
		}
	}
	// bm2-api not allocated and the running uid not listed: bm2 cannot
	// tell, and says nothing.
	accts = fakeAccounts{"alice": 1001}
	if got := Other(layout.System(), accts, own, runs(61700)); got != "" {
		t.Errorf("unknown: %q", got)
	}
}
