package cli

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
	"github.com/spf13/pflag"
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
// one candidate per line, and the line filesDirective when file names fit
// there too (the shell lists those itself).
const (
	completeCommand = "__complete"
	filesDirective  = ":files"
)

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
// "bm2".
func (a *App) candidates(words []string) []string {
	cur := words[len(words)-1]
	// --user and --system go anywhere; they choose whose projects are
	// completed.
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
	words = append(kept, cur)
	if len(words) == 1 {
		if strings.HasPrefix(cur, "-") {
			return withPrefix(cur, []string{"--help", "--system", "--user", "--version"})
		}
		return withPrefix(cur, commandNames())
	}
	c := lookup(words[0])
	if c == nil {
		return nil
	}
	fs := newFlagSet(c)
	c.setup(fs)
	fs.BoolP("help", "h", false, "show this help")

	// Count the arguments before cur, skipping flags and their values.
	pos, onlyArgs := 0, false
	for i := 1; i < len(words)-1; i++ {
		w := words[i]
		switch {
		case onlyArgs || w == "-" || !strings.HasPrefix(w, "-"):
			pos++
		case w == "--":
			onlyArgs = true
		default:
			f := flagOf(fs, w)
			if f == nil || f.Value.Type() == "bool" || strings.Contains(w, "=") {
				continue
			}
			if i+1 == len(words)-1 {
				return flagValue(f)
			}
			i++ // the flag's value
		}
	}
	if !onlyArgs && strings.HasPrefix(cur, "-") {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, "--"+f.Name)
			}
		})
		names = append(names, flagSystem, flagUser)
		return withPrefix(cur, names)
	}
	slots := usageSlots(help(c.name).usage)
	if len(slots) == 0 {
		return nil
	}
	if pos >= len(slots) {
		if last := slots[len(slots)-1]; !last.repeat {
			return nil
		}
		pos = len(slots) - 1
	}
	return a.fill(slots[pos], cur)
}

// flagOf finds the flag a word names: --name, --name=value or -x.
func flagOf(fs *pflag.FlagSet, w string) *pflag.Flag {
	if name, ok := strings.CutPrefix(w, "--"); ok {
		name, _, _ = strings.Cut(name, "=")
		return fs.Lookup(name)
	}
	if len(w) == 2 {
		return fs.ShorthandLookup(w[1:])
	}
	return nil
}

// flagValue completes a flag's value: file names for a FILE or DIR, else
// nothing bm2 could know.
func flagValue(f *pflag.Flag) []string {
	switch varname, _ := pflag.UnquoteUsage(f); varname {
	case "FILE", "DIR":
		return []string{filesDirective}
	}
	return nil
}

// slot is one argument of a command's usage line in help.txt, e.g.
// "<name | name-i>": its alternatives, and whether it repeats ("...").
type slot struct {
	alts   []string
	repeat bool
}

// usageSlots reads the arguments of a usage line: "<a | b>" and "[a | b]"
// groups, "..." for one that repeats. Completion follows the usage that
// --help and bm2(1) print, so the two cannot drift apart.
func usageSlots(usage string) []slot {
	var out []slot
	for usage != "" {
		i := strings.IndexAny(usage, "<[")
		if i < 0 {
			break
		}
		end := map[byte]string{'<': ">", '[': "]"}[usage[i]]
		j := strings.Index(usage[i:], end)
		if j < 0 {
			break
		}
		inner := usage[i+1 : i+j]
		usage = usage[i+j+1:]
		var s slot
		if rest, ok := strings.CutPrefix(usage, "..."); ok {
			s.repeat, usage = true, rest
		}
		for _, alt := range strings.Split(inner, "|") {
			alt = strings.TrimSpace(alt)
			if a, ok := strings.CutSuffix(alt, "..."); ok {
				s.repeat, alt = true, a
			}
			if alt != "" {
				s.alts = append(s.alts, alt)
			}
		}
		out = append(out, s)
	}
	return out
}

// fill lists what fits a slot: project names for "name", instance names
// for "name-i", commands for "command", file names (filesDirective) for
// "dir" and "file", nothing for a value in capitals ("N", "+N"); any
// other word stands for itself ("nginx", "bash", "max").
func (a *App) fill(s slot, cur string) []string {
	var out []string
	for _, alt := range s.alts {
		switch strings.ToLower(alt) {
		case "name":
			out = append(out, a.projectNames()...)
		case "name-i":
			out = append(out, a.instanceNames()...)
		case "command":
			out = append(out, commandNames()...)
		case "dir", "file":
		default:
			if strings.ToUpper(alt) == alt {
				continue // a value to type (N, +N): nothing bm2 could list
			}
			out = append(out, alt)
		}
	}
	out = withPrefix(cur, out)
	for _, alt := range s.alts {
		if l := strings.ToLower(alt); l == "dir" || l == "file" {
			out = append(out, filesDirective)
			break
		}
	}
	return out
}

// projectNames are the registered projects, as `bm2 list` reads them
// from the search path (no systemd needed).
func (a *App) projectNames() []string {
	entries, _ := a.c.Registry()
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// instanceNames are <name>-<i> for every instance of every valid project.
func (a *App) instanceNames() []string {
	entries, _ := a.c.Registry()
	var out []string
	for _, e := range entries {
		if e.Project == nil {
			continue
		}
		for i := 0; i < e.Project.Instances; i++ {
			out = append(out, units.InstanceID(e.Name, i))
		}
	}
	return out
}

// commandNames are the commands, without their aliases.
func commandNames() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	return out
}

// withPrefix keeps the candidates that start with prefix, sorted, once
// each.
func withPrefix(prefix string, cands []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
