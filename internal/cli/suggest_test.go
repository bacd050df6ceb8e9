package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// A mistyped command gets the commands it may have meant, on the error's
// line; the hint to bm2 --help stays.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, args := range [][]string{{"lsit"}, {"help", "lsit"}} {
		var out, errOut strings.Builder
		code := Main(context.Background(), append([]string{"--system"}, args...), Stdio{Out: &out, Err: &errOut})
		want := "bm2: unknown command \"lsit\"; did you mean \"list\"?\nbm2: run `bm2 --help` for the list of commands\n"
		if code != ExitUsage || errOut.String() != want {
			t.Errorf("bm2 %v: %d %q, want %d %q", args, code, errOut.String(), ExitUsage, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		word string
		want []string
	}{
		{"lsit", []string{"list"}},            // swapped letters
		{"LIST", []string{"list"}},            // case
		{"relaod", []string{"reload"}},        // swapped letters
		{"delet", []string{"delete"}},         // one left out
		{"imprt", []string{"import"}},         // one left out
		{"metrix", []string{"metrics"}},       // two edits, long word
		{"stat", []string{"start", "status"}}, // nearest, and begun
		{"lis", []string{"list", "ls"}},       // an alias is a name too
		{"rn", []string{"rm"}},
		{"nope", nil}, // two edits from "top": too far for four letters
		{"x", nil},
		{"", nil},
		{"deploy", nil},
	} {
		if got := suggest(c.word); !slices.Equal(got, c.want) {
			t.Errorf("suggest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	// Every name and alias is its own nearest.
	for _, c := range commands() {
		for _, n := range append([]string{c.name}, c.aliases...) {
			if got := suggest(n); len(got) == 0 || got[0] != n {
				t.Errorf("suggest(%q) = %q", n, got)
			}
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"list", "list", 0},
		{"lsit", "list", 1}, {"lst", "list", 1}, {"lisst", "list", 1}, {"lost", "list", 1},
		{"nope", "top", 2}, {"ca", "abc", 3}, {"héllo", "hello", 1},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := editDistance(c.b, c.a); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}
