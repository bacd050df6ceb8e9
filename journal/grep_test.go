package journal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGrepQueryArgs(t *testing.T) {
	for _, c := range []struct {
		q    Query
		want string
	}{
		// A pattern is one argument, in the = form: "-x" is no option.
		{Query{Units: []string{"bm2@api-0.service"}, Lines: 5, Grep: "-x"},
			"--no-pager -o json -u bm2@api-0.service -n 5 -r --grep=-x"},
		{Query{Units: []string{"bm2@api-0.service"}, Grep: "a b"},
			"--no-pager -o json -u bm2@api-0.service --grep=a b"},
		{Query{Units: []string{"bm2@api-0.service"}, Lines: 5, Follow: true, Grep: "x"},
			"--no-pager -o json -u bm2@api-0.service -n 5 -f --grep=x"},
		{Query{Units: []string{"bm2@api-0.service"}, Follow: true, AfterCursor: "s=1;i=2", Grep: "x"},
			"--no-pager -o json -u bm2@api-0.service --after-cursor=s=1;i=2 -f --no-tail --grep=x"},
		// -n all -f: every entry, not journalctl -f's last 10.
		{Query{Units: []string{"bm2@api-0.service"}, Follow: true},
			"--no-pager -o json -u bm2@api-0.service -f --no-tail"},
	} {
		args := c.q.Args()
		if got := strings.Join(args, " "); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.q, got, c.want)
		}
		if c.q.Grep != "" && args[len(args)-1] != "--grep="+c.q.Grep {
			t.Errorf("%+v: the pattern is not one argument: %q", c.q, args)
		}
	}
}

// fakeJournalctl puts a journalctl on PATH that runs script (sh) and
// appends its arguments, a line per run, to the returned file.
func fakeJournalctl(t *testing.T, script string) (calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	body := "#!/bin/sh\necho \"$*\" >> " + calls + "\n" + script
	if err := os.WriteFile(filepath.Join(dir, "journalctl"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return calls
}

func readCalls(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func entry(cursor, msg string) string {
	return `echo '{"__CURSOR":"` + cursor + `","__REALTIME_TIMESTAMP":"1","_SYSTEMD_UNIT":"bm2@api-0.service","MESSAGE":"` + msg + `"}'` + "\n"
}

func messages(t *testing.T, q Query) ([]string, error) {
	t.Helper()
	var got []string
	err := Read(context.Background(), q, func(e Entry) error { got = append(got, e[FieldCursor]+":"+e["MESSAGE"]); return nil })
	return got, err
}

// journalctl answers --grep with -n newest first; Read turns it around.
func TestReadGrepOldestFirst(t *testing.T) {
	fakeJournalctl(t, `case "$*" in *" -r "*) `+entry("c3", "hello 3")+entry("c1", "hello 1")+`;; esac`)
	got, err := messages(t, Query{Units: []string{"bm2@api-0.service"}, Lines: 2, Grep: "hello"})
	if err != nil || strings.Join(got, ",") != "c1:hello 1,c3:hello 3" {
		t.Fatalf("got %v, %v; want c1 then c3", got, err)
	}
}

// -f with -n and --grep: the last matches, then what comes after the
// newest of them, each once.
func TestReadGrepFollow(t *testing.T) {
	calls := fakeJournalctl(t, `case "$*" in
*"--after-cursor=c3 "*) `+entry("c5", "hello 5")+`;;
*" -r "*) `+entry("c3", "hello 3")+entry("c1", "hello 1")+`;;
*"-n 1"*) `+entry("c4", "not it")+`;;
*) echo "unexpected: $*" >&2; exit 9;;
esac`)
	got, err := messages(t, Query{Units: []string{"bm2@api-0.service"}, Lines: 2, Follow: true, Grep: "hello"})
	if err != nil || strings.Join(got, ",") != "c1:hello 1,c3:hello 3,c5:hello 5" {
		t.Fatalf("got %v, %v", got, err)
	}
	want := []string{
		"--no-pager -o json -u bm2@api-0.service -n 1",
		"--no-pager -o json -u bm2@api-0.service -n 2 -r --grep=hello",
		"--no-pager -o json -u bm2@api-0.service --after-cursor=c3 -f --no-tail --grep=hello",
	}
	if c := readCalls(t, calls); strings.Join(c, "\n") != strings.Join(want, "\n") {
		t.Fatalf("journalctl runs:\n%s\nwant:\n%s", strings.Join(c, "\n"), strings.Join(want, "\n"))
	}
}

// Nothing matches yet: follow from the newest entry there was before the
// matches were looked for, or from the time of the call when there was
// none.
func TestReadGrepFollowNoMatch(t *testing.T) {
	calls := fakeJournalctl(t, `case "$*" in
*"--after-cursor=c4 "*) `+entry("c6", "hello 6")+`;;
*" -r "*) exit 1;;
*"-n 1"*) `+entry("c4", "not it")+`;;
*) echo "unexpected: $*" >&2; exit 9;;
esac`)
	got, err := messages(t, Query{Units: []string{"bm2@api-0.service"}, Lines: 2, Follow: true, Grep: "hello"})
	if err != nil || strings.Join(got, ",") != "c6:hello 6" {
		t.Fatalf("got %v, %v", got, err)
	}
	if c := readCalls(t, calls); len(c) != 3 {
		t.Fatalf("journalctl runs: %q", c)
	}

	calls = fakeJournalctl(t, `case "$*" in
*" -r "*) exit 1;;
*"--since @"*" -f --no-tail --grep=hello") `+entry("c1", "hello 1")+`;;
*"-n 1"*) ;;
*) echo "unexpected: $*" >&2; exit 9;;
esac`)
	got, err = messages(t, Query{Units: []string{"bm2@api-0.service"}, Lines: 2, Follow: true, Grep: "hello", Since: "today"})
	if err != nil || strings.Join(got, ",") != "c1:hello 1" {
		t.Fatalf("empty journal: got %v, %v (runs %q)", got, err, readCalls(t, calls))
	}
}

func TestReadGrepErrors(t *testing.T) {
	q := Query{Units: []string{"bm2@api-0.service"}, Lines: 20, Grep: "("}
	for _, c := range []struct {
		name, script string
		check        func(error) bool
	}{
		// journalctl exits 1 for a pattern that matches nothing, as grep.
		{"no match", "exit 1", func(err error) bool { return err == nil }},
		{"no match, with a notice", "echo 'No journal files were found.' >&2; exit 1", func(err error) bool { return err == nil }},
		{"no match, restricted", `printf 'Hint: You are currently not seeing messages from other users and the system.\n      Users in groups '"'adm'"' can see all messages.\n      Pass -q to turn off this notice.\n' >&2; exit 1`,
			func(err error) bool { return errors.Is(err, ErrRestricted) }},
		{"bad pattern", `echo 'Bad pattern "(": missing closing parenthesis' >&2; exit 1`, func(err error) bool {
			return errors.Is(err, ErrPattern) && strings.Contains(err.Error(), `"(": Bad pattern "(": missing closing parenthesis`)
		}},
		{"no pcre2", `echo 'PCRE2 support is not installed: No such file or directory' >&2; exit 1`,
			func(err error) bool { return errors.Is(err, ErrPattern) }},
		// Any other failure is one, not an empty result.
		{"other failure", `echo 'Failed to open journal: Input/output error' >&2; exit 1`, func(err error) bool {
			return err != nil && !errors.Is(err, ErrPattern) && strings.Contains(err.Error(), "Input/output error")
		}},
		{"other exit code", "exit 2", func(err error) bool { return err != nil }},
	} {
		fakeJournalctl(t, c.script)
		if _, err := messages(t, q); !c.check(err) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Without --grep, exit 1 is a failure.
	fakeJournalctl(t, "exit 1")
	if _, err := messages(t, Query{Units: []string{"bm2@api-0.service"}}); err == nil {
		t.Error("journalctl's exit 1 without --grep taken for no entries")
	}
}
