package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// SkipLogEnv names the file where every skip is recorded, one line each,
// so that `make test` can say at its end what did not run and how to make
// it run (go test hides skip messages without -v). Unset, skips are only
// reported by go test itself.
const SkipLogEnv = "BM2_TEST_SKIPS"

// A Need is something a test needs from the host, with the one command
// that provides it: "no nginx" and "apt-get install nginx".
type Need struct {
	What string // what is missing, worded as "no nginx"
	Fix  string // the one command that provides it
}

// Skip is the one place where a test decides that it cannot run here:
// without CI it skips, saying what is missing and the command that
// provides it, and records the skip for `make test`'s summary; with
// CI=true it fails, since CI installs everything (make test-deps). The
// only tests that skip under CI are the machine limits (see Limit).
func Skip(t testing.TB, n Need, detail ...any) {
	t.Helper()
	msg := n.What + " (" + n.Fix + ")"
	if len(detail) > 0 {
		msg += ": " + fmt.Sprint(detail...)
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true, and this test cannot run: %s", msg)
	}
	record(t, n)
	t.Skip("skipping: " + msg)
}

// Command returns the path of a command a test needs, looking in PATH and
// then in /usr/sbin and /usr/bin (a normal user's PATH may lack sbin), or
// skips the test through Skip with fix as the command that installs it.
func Command(t testing.TB, name, fix string) string {
	t.Helper()
	if p, err := LookCommand(name); err == nil {
		return p
	}
	Skip(t, Need{What: "no " + name, Fix: fix})
	return ""
}

// Commands is Command for several commands that one fix provides; the
// missing ones are named together.
func Commands(t testing.TB, fix string, names ...string) {
	t.Helper()
	var missing []string
	for _, n := range names {
		if _, err := LookCommand(n); err != nil {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		Skip(t, Need{What: "no " + strings.Join(missing, ", "), Fix: fix})
	}
}

// LookCommand finds a command as Command does, without a test.
func LookCommand(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
		c := filepath.Join(dir, name)
		if st, serr := os.Stat(c); serr == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	return "", err
}

// Root skips a test that needs root (through Skip: with CI=true, which
// runs as root, it fails instead).
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, Need{What: "not root", Fix: "sudo make test"})
	}
}

// DepsFix is the one command that installs every test dependency.
const DepsFix = "sudo make test-deps"

// A limit is something this machine kind cannot give a test, so that even
// CI cannot run it: the test runs only where the named environment
// variable is "1", a person saying "this host has it".
type limit struct {
	Env    string
	Reason string
}

// limits is every test that may skip under CI=true, in one place. Each is
// gated by its own variable; Limit refuses a name that is not listed.
var limits = map[string]limit{
	// None today: everything make test needs, this machine kind has
	// (make test-deps). An entry reads, for example:
	//
	//	"cgroup-v2-delegation": {Env: "BM2_TEST_CGROUP2_DELEGATION",
	//		Reason: "this machine kind runs cgroup v1, where a user manager gets no controllers"},
}

// Limit runs the rest of a test only where the machine limit name is
// lifted by its environment variable; elsewhere, even under CI, it skips
// with the limit's reason. See limits for the list.
func Limit(t testing.TB, name string) {
	t.Helper()
	l, ok := limits[name]
	if !ok {
		t.Fatalf("testutil.Limit: %q is not in testutil's list of machine limits", name)
	}
	if os.Getenv(l.Env) == "1" {
		return
	}
	n := Need{What: l.Reason, Fix: l.Env + "=1 on a host that has it"}
	record(t, n)
	t.Skip("skipping: " + n.What + " (" + n.Fix + ")")
}

var recordMu sync.Mutex

// record appends one line to the skip log: the test, what is missing and
// the fix, tab-separated. Lines are short and written with one O_APPEND
// write, so parallel test binaries do not interleave them.
func record(t testing.TB, n Need) {
	file := os.Getenv(SkipLogEnv)
	if file == "" {
		return
	}
	line := strings.NewReplacer("\t", " ", "\n", " ").Replace(t.Name()) + "\t" +
		strings.NewReplacer("\t", " ", "\n", " ").Replace(n.What) + "\t" +
		strings.NewReplacer("\t", " ", "\n", " ").Replace(n.Fix) + "\n"
	recordMu.Lock()
	defer recordMu.Unlock()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Logf("cannot record the skip in %s: %v", file, err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		t.Logf("cannot record the skip in %s: %v", file, err)
	}
}

// SkipSummary reads a skip log and returns the summary `make test` prints
// at its end: how many tests were skipped, and each distinct reason with
// its fix, the most frequent first. An empty log gives "skipped 0 tests".
func SkipSummary(log string) string {
	type group struct {
		n        int
		what, fx string
	}
	var groups []*group
	byKey := map[string]*group{}
	total := 0
	seen := map[string]bool{}
	for _, line := range strings.Split(log, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			continue
		}
		if seen[line] {
			continue // a test that skipped in two packages' runs is one line
		}
		seen[line] = true
		total++
		k := f[1] + "\t" + f[2]
		g := byKey[k]
		if g == nil {
			g = &group{what: f[1], fx: f[2]}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.n++
	}
	if total == 0 {
		return "skipped 0 tests"
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].n > groups[j].n })
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprintf("%s (%s) ×%d", g.what, g.fx, g.n)
	}
	noun := "tests"
	if total == 1 {
		noun = "test"
	}
	return fmt.Sprintf("skipped %d %s: %s", total, noun, strings.Join(parts, "; "))
}

// asNobodyEnv marks the child process of Unprivileged.
const asNobodyEnv = "BM2_TEST_AS_NOBODY"

// Unprivileged lets a test that is about what a normal user cannot do run
// as root too: as root, it runs the test again in a copy of the test
// binary as nobody (uid and gid 65534), reports that run's outcome and
// returns true (the caller returns at once); as a normal user it returns
// false and the test goes on. Only top-level tests can use it.
func Unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	if os.Getenv(asNobodyEnv) != "" {
		t.Fatalf("still root in the child run as nobody")
	}
	dir, err := os.MkdirTemp("", "bm2-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), asNobodyEnv+"=1", "HOME="+home, "TMPDIR="+home, "USER=nobody", "LOGNAME=nobody")
	cmd.SysProcAttr = nobodyAttr()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP: "+t.Name()) {
		t.Fatalf("as nobody, the test skipped:\n%s", out)
	}
	t.Logf("ran as nobody (uid 65534):\n%s", out)
	return true
}
