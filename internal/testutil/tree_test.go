package testutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// goFiles returns the repository's Go files (vendor directories, the
// top's and the bench module's, and hidden directories left out),
// relative to its root, read.
func goFiles(t *testing.T) (root string, files map[string]string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files = map[string]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "vendor" || rel == filepath.Join("bench", "vendor") || rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return root, files
}

// packageDirs are the directories that hold a Go package.
func packageDirs(files map[string]string) []string {
	seen := map[string]bool{}
	for f := range files {
		seen[filepath.Dir(f)] = true
	}
	var dirs []string
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// The top level is the design: the commands, the generator, the units,
// the probe, the journal, and the tests, bench and demo beside them.
// Every other library lives under internal/.
func TestTopLevelIsTheDesign(t *testing.T) {
	_, files := goFiles(t)
	design := []string{"cmd", "generator", "units", "probehelper", "journal", "internal", "e2e", "bench", "demo"}
	for _, d := range packageDirs(files) {
		top, _, _ := strings.Cut(d, "/")
		if !slices.Contains(design, top) {
			t.Errorf("package %s is at the top level: a library belongs under internal/", d)
		}
	}
}

// The Architecture table of HACKING.md names every package.
func TestArchitectureListsEveryPackage(t *testing.T) {
	root, files := goFiles(t)
	data, err := os.ReadFile(filepath.Join(root, "HACKING.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Architecture\n")
	if !ok {
		t.Fatal("HACKING.md has no Architecture section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, d := range packageDirs(files) {
		if !strings.Contains(section, "`"+d+"`") {
			t.Errorf("the Architecture section of HACKING.md does not name package `%s`", d)
		}
	}
}

// Root's readers and writers open paths through one package: only
// internal/safefs says O_NOFOLLOW.
func TestOneNoFollowOpener(t *testing.T) {
	_, files := goFiles(t)
	for f, text := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "internal/safefs/") {
			continue
		}
		if strings.Contains(text, "O_NOFOLLOW") {
			t.Errorf("%s opens with O_NOFOLLOW itself: go through internal/safefs", f)
		}
	}
}

// A test reads its own package's testdata or the shared testdata/ at the
// top, never another package's.
func TestNoTestReadsAnotherPackagesTestdata(t *testing.T) {
	_, files := goFiles(t)
	other := regexp.MustCompile(`"(?:\.\./)+(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*/)+testdata\b`)
	for f, text := range files {
		if !strings.HasSuffix(f, "_test.go") {
			continue
		}
		for _, m := range other.FindAllString(text, -1) {
			t.Errorf("%s reads %s", f, m[1:])
		}
	}
}

// The fakes the tests share (internal/sysdtest, internal/journaltest) are
// imported by tests only: nothing bm2 builds carries them.
func TestFakesOnlyInTests(t *testing.T) {
	_, files := goFiles(t)
	for f, text := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		for _, fake := range []string{"internal/sysdtest", "internal/journaltest"} {
			if strings.Contains(text, `"github.com/bm2dev/bm2/`+fake+`"`) {
				t.Errorf("%s imports %s, which only tests may", f, fake)
			}
		}
	}
}
