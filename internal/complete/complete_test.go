package complete

import (
	"reflect"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/spf13/pflag"
)

// A usage line's arguments are its slots: alternatives, and whether the
// last repeats.
func TestUsageSlots(t *testing.T) {
	got := usageSlots("<nginx | caddy | httproute> [name...]")
	want := []slot{{alts: []string{"nginx", "caddy", "httproute"}}, {alts: []string{"name"}, repeat: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("slots %+v, want %+v", got, want)
	}
	if got := usageSlots("<name | name-i>..."); len(got) != 1 || !got[0].repeat {
		t.Errorf("repeat after the group: %+v", got)
	}
}

// Candidates fill a slot from the projects, skip a flag's value, and
// offer file names where the usage says so.
func TestCandidates(t *testing.T) {
	fs := pflag.NewFlagSet("logs", pflag.ContinueOnError)
	fs.StringP("lines", "n", "20", "show the last `N` lines")
	fs.String("out", "", "write to `FILE`")
	line := Line{
		Commands: []string{"logs", "check"},
		Lookup: func(name string) (Command, bool) {
			switch name {
			case "logs":
				return Command{Flags: fs, Usage: "<name | name-i>"}, true
			case "check":
				return Command{Flags: pflag.NewFlagSet("check", pflag.ContinueOnError), Usage: "[dir | file | name]"}, true
			}
			return Command{}, false
		},
		Own:      []string{"--help"},
		Anywhere: []string{"--user"},
		Entries: func() []config.Entry {
			return []config.Entry{{Name: "web", Project: &config.Project{Instances: 2}}, {Name: "bad"}}
		},
	}
	for _, c := range []struct {
		words, want []string
	}{
		{[]string{"l"}, []string{"logs"}},
		{[]string{"-"}, []string{"--help"}},
		{[]string{"logs", "-n", "5", "w"}, []string{"web", "web-0", "web-1"}},
		{[]string{"logs", "-n", ""}, nil},
		{[]string{"logs", "--out", ""}, []string{FilesDirective}},
		{[]string{"logs", "--"}, []string{"--lines", "--out", "--user"}},
		{[]string{"check", "b"}, []string{"bad", FilesDirective}},
		{[]string{"nope", ""}, nil},
	} {
		if got := Candidates(c.words, line); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %q, want %q", c.words, got, c.want)
		}
	}
}
