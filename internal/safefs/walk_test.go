package safefs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/testutil"
	"golang.org/x/sys/unix"
)

// nobody owns the links and directories that stand for a user's.
const nobody = 65534

// tree builds the links every policy is tried on, under a directory of
// the caller's (root's, when the test runs as root):
//
//	real/sub/f          "data", the file every walk aims at
//	victim/f            "victim", where a hostile link points instead
//	real/sub/rootf  ->  f          root's link at the last component
//	real/sub/userf  ->  f          a user's link at the last component
//	rootdir         ->  real       root's link on the way
//	userdir         ->  real       a user's link on the way
//	abs             ->  <base>/real  root's, absolute
//	users/          a user's directory
//	users/rootlink  ->  ../real    root's link in a user's directory
//	open/           root's, mode 0777
//	open/rootlink   ->  ../real    root's link in a directory anyone writes
//	hop             ->  real       a user's link at every component:
//	real/hop        ->  sub        hop/hop/hop reaches real/sub/f
//	real/sub/hop    ->  f
//	real/moved      ->  ../victim  a user's link where a directory was
//	real/up         ->  ../real    root's link whose target climbs
//	loop1 <-> loop2
//
// Links "root" owns are the caller's when the test does not run as root;
// the rows that need them to be root's skip then.
func tree(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := os.Geteuid() == 0
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	at := func(p string) string { return filepath.Join(base, p) }
	mkdir := func(p string, mode os.FileMode, user bool) {
		must(os.Mkdir(at(p), mode))
		must(os.Chmod(at(p), mode))
		if user && root {
			must(os.Chown(at(p), nobody, nobody))
		}
	}
	link := func(target, p string, user bool) {
		must(os.Symlink(target, at(p)))
		if user && root {
			must(os.Lchown(at(p), nobody, nobody))
		}
	}
	mkdir("real", 0o755, false)
	mkdir("real/sub", 0o755, false)
	must(os.WriteFile(at("real/sub/f"), []byte("data"), 0o644))
	mkdir("victim", 0o755, false)
	must(os.WriteFile(at("victim/f"), []byte("victim"), 0o644))
	link("f", "real/sub/rootf", false)
	link("f", "real/sub/userf", true)
	link("real", "rootdir", false)
	link("real", "userdir", true)
	link(at("real"), "abs", false)
	mkdir("users", 0o755, true)
	link("../real", "users/rootlink", false)
	mkdir("open", 0o777, false)
	link("../real", "open/rootlink", false)
	link("real", "hop", true)
	link("sub", "real/hop", true)
	link("f", "real/sub/hop", true)
	link("../victim", "real/moved", true)
	link("../real", "real/up", false)
	link("loop2", "loop1", false)
	link("loop1", "loop2", false)
	return base
}

// TestPolicies walks every link of tree under every policy, twice: with
// Resolve, which applies the policy to a link at the last component too
// (trust.Read), and with OpenDir of the directory and OpenAt of the name,
// which never follows the last component (envfile, import).
func TestPolicies(t *testing.T) {
	base := tree(t)
	const (
		data   = "data"
		victim = "victim"
		refuse = "ELOOP"
	)
	type want struct{ none, rootOwned, all string }
	rows := []struct {
		name string
		path string
		want want
		// last: the link is the last component, which OpenDir+OpenAt
		// never follows.
		last bool
		// root: the row needs root's links to be root's.
		root bool
		at   string // the link the policy's ELOOP names
	}{
		{name: "no link", path: "real/sub/f", want: want{data, data, data}},
		{name: "root's link at the last component", path: "real/sub/rootf", want: want{refuse, data, data}, last: true, root: true},
		{name: "a user's link at the last component", path: "real/sub/userf", want: want{refuse, refuse, data}, last: true},
		{name: "root's link on the way", path: "rootdir/sub/f", want: want{refuse, data, data}, root: true, at: "rootdir"},
		{name: "a user's link on the way", path: "userdir/sub/f", want: want{refuse, refuse, data}, at: "userdir"},
		{name: "root's absolute link", path: "abs/sub/f", want: want{refuse, data, data}, root: true, at: "abs"},
		{name: "root's link in a user's directory", path: "users/rootlink/sub/f", want: want{refuse, refuse, data}, at: "users/rootlink"},
		{name: "root's link in a directory anyone writes", path: "open/rootlink/sub/f", want: want{refuse, refuse, data}, at: "open/rootlink"},
		{name: "a user's link at every component", path: "hop/hop/hop", want: want{refuse, refuse, data}, last: true, at: "hop"},
		{name: "a directory replaced by a user's link", path: "real/moved/f", want: want{refuse, refuse, victim}, at: "real/moved"},
		{name: "a loop", path: "loop1", want: want{refuse, refuse, refuse}, last: true},
	}
	policies := []struct {
		name   string
		follow Follow
		want   func(want) string
	}{
		{"none", FollowNone, func(w want) string { return w.none }},
		{"root-owned", FollowRootOwned, func(w want) string { return w.rootOwned }},
		{"all", FollowAll, func(w want) string { return w.all }},
	}
	for _, r := range rows {
		for _, pol := range policies {
			for _, mode := range []string{"resolve", "open"} {
				t.Run(r.name+"/"+pol.name+"/"+mode, func(t *testing.T) {
					if r.root {
						testutil.Root(t)
					}
					expect := pol.want(r.want)
					if mode == "open" && r.last {
						expect = refuse
					}
					p := Policy{Follow: pol.follow}
					path := filepath.Join(base, r.path)
					var got string
					var err error
					if mode == "resolve" {
						got, err = resolveRead(path, p)
					} else {
						got, err = openRead(path, p)
					}
					switch {
					case expect == refuse:
						if !errors.Is(err, unix.ELOOP) {
							t.Fatalf("read %q, err %v; want ELOOP", got, err)
						}
						var pe *os.PathError
						if r.at != "" && pol.want(r.want) == refuse && (!errors.As(err, &pe) || pe.Path != filepath.Join(base, r.at)) {
							t.Fatalf("err %v; want it to name %s", err, r.at)
						}
					case err != nil || got != expect:
						t.Fatalf("read %q, err %v; want %q", got, err, expect)
					}
				})
			}
		}
	}
}

func resolveRead(path string, p Policy) (string, error) {
	d, name, err := Resolve(path, p)
	if err != nil {
		return "", err
	}
	defer d.Close()
	return readAt(d, name)
}

func openRead(path string, p Policy) (string, error) {
	d, err := OpenDir(filepath.Dir(path), p)
	if err != nil {
		return "", err
	}
	defer d.Close()
	return readAt(d, filepath.Base(path))
}

func readAt(d *Dir, name string) (string, error) {
	fd, err := OpenAt(d.Fd(), name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: filepath.Join(d.Path(), name), Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// A link's target that climbs is walked back through the directories
// walked, unless the policy refuses "..".
func TestDotDot(t *testing.T) {
	testutil.Root(t) // real/up is root's link
	base := tree(t)
	path := filepath.Join(base, "real/up/sub/f")
	if got, err := resolveRead(path, Policy{Follow: FollowRootOwned}); err != nil || got != "data" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := OpenDir(filepath.Dir(path), Policy{Follow: FollowRootOwned, NoDotDot: true}); err == nil || !strings.Contains(err.Error(), ".. in a path") {
		t.Fatalf("err %v", err)
	}
}

// A walk from a directory stays below it: ".." above it is EXDEV, and no
// link is followed under FollowNone.
func TestDirOpenDirBeneath(t *testing.T) {
	base := tree(t)
	d, err := OpenDir(filepath.Join(base, "real"), Policy{Follow: FollowNone})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sub, err := d.OpenDir("sub", Policy{Follow: FollowNone})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if got, err := readAt(sub, "f"); err != nil || got != "data" || sub.Path() != filepath.Join(base, "real/sub") {
		t.Fatalf("%q %v %s", got, err, sub.Path())
	}
	self, err := d.OpenDir(".", Policy{})
	if err != nil || self.Fd() == d.Fd() {
		t.Fatalf("%v: a walk to the directory itself gives a descriptor of its own", err)
	}
	self.Close()
	for _, rel := range []string{"../victim", "/etc", "sub/../../victim"} {
		if _, err := d.OpenDir(rel, Policy{Follow: FollowAll}); !errors.Is(err, unix.EXDEV) {
			t.Errorf("%s: err %v, want EXDEV", rel, err)
		}
	}
	if _, err := d.OpenDir("moved", Policy{Follow: FollowNone}); !errors.Is(err, unix.ELOOP) {
		t.Errorf("moved: err %v, want ELOOP", err)
	}
}

// Visit is shown every directory opened and every link followed, as
// walked.
func TestVisit(t *testing.T) {
	base := tree(t)
	var steps []string
	visit := func(s Step) {
		if strings.HasPrefix(s.Path, base) {
			kind := "dir"
			if s.Link {
				kind = "link"
			}
			steps = append(steps, kind+" "+strings.TrimPrefix(s.Path, base))
		}
	}
	d, name, err := Resolve(filepath.Join(base, "userdir/sub/userf"), Policy{Follow: FollowAll, Visit: visit})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	want := []string{"dir ", "link /userdir", "dir /real", "dir /real/sub", "link /real/sub/userf"}
	if name != "f" || d.Path() != filepath.Join(base, "real/sub") || !reflect.DeepEqual(steps, want) {
		t.Fatalf("%s in %s, steps %q; want %q", name, d.Path(), steps, want)
	}
}

// Create makes the directories that are missing, and walks into what is
// there as into any other: a link is still decided by the policy.
func TestCreate(t *testing.T) {
	base := tree(t)
	d, err := OpenDir(filepath.Join(base, "new/a/b"), Policy{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if st, err := os.Lstat(filepath.Join(base, "new/a/b")); err != nil || !st.IsDir() {
		t.Fatalf("%v %v", st, err)
	}
	if _, err := OpenDir(filepath.Join(base, "real/moved/new"), Policy{Create: true}); !errors.Is(err, unix.ELOOP) {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Lstat(filepath.Join(base, "victim/new")); !os.IsNotExist(err) {
		t.Fatalf("created through a link: %v", err)
	}
	if _, err := OpenDir(filepath.Join(base, "none/a"), Policy{}); !errors.Is(err, unix.ENOENT) {
		t.Fatalf("err %v", err)
	}
}

// Dir.Write replaces a link at the name instead of writing through it.
func TestDirWrite(t *testing.T) {
	base := tree(t)
	d, err := OpenDir(filepath.Join(base, "real/sub"), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Write("hop", []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(base, "real/sub/f")); string(data) != "data" {
		t.Fatalf("written through the link: %q", data)
	}
	st, err := os.Lstat(filepath.Join(base, "real/sub/hop"))
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", st, err)
	}
	if _, err := os.Lstat(filepath.Join(base, "real/sub", TempPrefix+"hop")); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	for _, name := range []string{"a/b", "..", ""} {
		if err := d.Write(name, nil, 0o600); err == nil {
			t.Errorf("wrote %q", name)
		}
	}
}

// OpenAt and OpenFile never follow the last component.
func TestOpenNoFollow(t *testing.T) {
	base := tree(t)
	if _, err := OpenFile(filepath.Join(base, "real/sub/userf"), os.O_RDONLY, 0); !errors.Is(err, unix.ELOOP) {
		t.Fatalf("err %v", err)
	}
	f, err := OpenFile(filepath.Join(base, "userdir/sub/f"), os.O_RDONLY, 0) // the kernel's walk
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := OpenAt(unix.AT_FDCWD, filepath.Join(base, "rootdir"), unix.O_PATH|unix.O_DIRECTORY, 0); err != unix.ENOTDIR {
		t.Fatalf("err %v", err)
	}
}
