package cli

import (
	_ "embed"
	"fmt"

	"github.com/bm2dev/bm2/internal/complete"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/wording"
)

// The shell completion scripts, as `bm2 completion SHELL` prints them and
// `make install-files` installs them. They are thin: every candidate comes
// from `bm2 __complete`.
var (
	//go:embed completion/bm2.bash
	bashCompletion string
	//go:embed completion/_bm2
	zshCompletion string
	//go:embed completion/bm2.fish
	fishCompletion string
)

// completionShells are the shells `bm2 completion` knows, in help order.
var completionShells = []struct{ name, script string }{
	{"bash", bashCompletion},
	{"zsh", zshCompletion},
	{"fish", fishCompletion},
}

// completeCommand is the hidden command the scripts call:
// `bm2 __complete -- WORD...`, the words after "bm2" up to the cursor,
// the last one the word being completed ("" for a new word). It prints
// one candidate per line, and the line complete.FilesDirective when file
// names fit there too (the shell lists those itself).
const completeCommand = "__complete"

// completion is `bm2 completion SHELL`.
func (a *App) completion(shell string) error {
	var names []string
	for _, s := range completionShells {
		if s.name == shell {
			fmt.Fprint(a.Out, s.script)
			return nil
		}
		names = append(names, s.name)
	}
	return usageErr("completion", "completion: unknown shell %q: bm2 has completion for %s", shell, wording.JoinWords(names))
}

// complete is `bm2 __complete -- WORD...`. It never fails: a shell must
// not print errors into a command line.
func (a *App) complete(args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		args = []string{""}
	}
	for _, c := range a.candidates(args) {
		fmt.Fprintln(a.Out, c)
	}
	return nil
}

// candidates completes the last of words, a bm2 command line without
// "bm2" (package complete): --user and --system go anywhere, and choose
// whose projects are completed.
func (a *App) candidates(words []string) []string {
	cur := words[len(words)-1]
	kept := make([]string, 0, len(words))
	for _, w := range words[:len(words)-1] {
		if w == flagUser || w == flagSystem {
			if l, err := control.ChooseScope(map[string]layout.Kind{flagUser: layout.UserScope, flagSystem: layout.SystemScope}[w]); err == nil {
				a.c.Layout = &l
			}
			continue
		}
		kept = append(kept, w)
	}
	return complete.Candidates(append(kept, cur), complete.Line{
		Commands: commandNames(),
		Lookup:   completeLookup,
		Own:      []string{"--help", "--system", "--user", "--version"},
		Anywhere: []string{flagSystem, flagUser},
		Entries: func() []entry {
			entries, _ := a.c.Projects().Entries()
			return entries
		},
	})
}

// completeLookup is a command as completion sees it: its flags and its
// usage line.
func completeLookup(name string) (complete.Command, bool) {
	c := lookup(name)
	if c == nil {
		return complete.Command{}, false
	}
	fs := newFlagSet(c)
	c.setup(fs)
	fs.BoolP("help", "h", false, "show this help")
	return complete.Command{Flags: fs, Usage: help(c.name).usage}, true
}

// commandNames are the commands, without their aliases.
func commandNames() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	return out
}
