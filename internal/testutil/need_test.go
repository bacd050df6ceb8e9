package testutil

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every skip goes through Skip or Limit: a test that calls t.Skip itself
// would skip under CI=true and stay out of make test's summary.
func TestNoSkipOutsideTestutil(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	direct := regexp.MustCompile(`\b(t|b|tb|f)\.(Skip|Skipf|SkipNow)\(`)
	var found []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "vendor" || rel == "bench/vendor" || rel == "internal/testutil" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if direct.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				found = append(found, rel+":"+itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("skips that bypass testutil.Skip (use testutil.Skip, Command, Root or Limit):\n%s", strings.Join(found, "\n"))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSkipSummary(t *testing.T) {
	log := "TestA\tno nginx\tsudo apt-get install nginx\n" +
		"TestB\tno debhelper\tsudo sh debian/build-deps.sh\n" +
		"TestC\tno debhelper\tsudo sh debian/build-deps.sh\n" +
		"TestC\tno debhelper\tsudo sh debian/build-deps.sh\n" + // the same test twice is one
		"garbage line\n"
	got := SkipSummary(log)
	want := "skipped 3 tests: no debhelper (sudo sh debian/build-deps.sh) ×2; no nginx (sudo apt-get install nginx) ×1"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := SkipSummary(""); got != "skipped 0 tests" {
		t.Fatalf("empty log: %q", got)
	}
}

// Skip records what it skips in the log make test reads, and fails under
// CI=true; run in a subprocess-free way through a fake testing.TB.
func TestSkipRecordsAndFailsUnderCI(t *testing.T) {
	log := filepath.Join(t.TempDir(), "skips")
	t.Setenv(SkipLogEnv, log)
	t.Setenv("CI", "")
	ran := t.Run("skipper", func(t *testing.T) {
		Skip(t, Need{What: "no frobnicator", Fix: "apt-get install frob"})
		t.Error("Skip returned")
	})
	if !ran {
		t.Fatal("the skipped subtest failed")
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "TestSkipRecordsAndFailsUnderCI/skipper\tno frobnicator\tapt-get install frob\n" {
		t.Fatalf("log %q", data)
	}

	f := &fatalTB{TB: t}
	t.Setenv("CI", "true")
	func() {
		defer func() { recover() }()
		Skip(f, Need{What: "no frobnicator", Fix: "apt-get install frob"})
	}()
	if !strings.Contains(f.msg, "CI=true") || !strings.Contains(f.msg, "no frobnicator (apt-get install frob)") {
		t.Fatalf("under CI, Skip said %q", f.msg)
	}
}

type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}

// Every machine limit is used by a test, and names its variable.
func TestLimitsAreUsed(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range limits {
		if !strings.HasPrefix(l.Env, "BM2_TEST_") || l.Reason == "" {
			t.Errorf("limit %s: variable %q, reason %q", name, l.Env, l.Reason)
		}
		out, _ := exec.Command("grep", "-rlF", "--include=*_test.go", "--exclude-dir=vendor", `testutil.Limit(t, "`+name+`")`, root).Output()
		if len(out) == 0 {
			t.Errorf("limit %s is used by no test", name)
		}
	}
}
