package complete

import (
	"sort"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/units"
	"github.com/spf13/pflag"
)

// FilesDirective is the candidate that says file names fit too (the
// shell lists those itself).
const FilesDirective = ":files"

// Command is what completion needs of one command: its flags, defined on
// a set, and its usage line in help.txt.
type Command struct {
	Flags *pflag.FlagSet
	Usage string
}

// Line is the command line completion works on: the commands and their
// flags and usage, bm2's own flags, and the projects.
type Line struct {
	// Commands are the command names, without their aliases.
	Commands []string
	// Lookup is the command a name or an alias names; false: none.
	Lookup func(name string) (Command, bool)
	// Own are the flags that go before a command (--help, --version, ...);
	// Anywhere, those that go anywhere (--system, --user), offered among
	// every command's own.
	Own, Anywhere []string
	// Entries are the registered projects, valid or not.
	Entries func() []config.Entry
}

// Candidates completes the last of words, a bm2 command line without
// "bm2" (and without the flags that go anywhere).
func Candidates(words []string, l Line) []string {
	cur := words[len(words)-1]
	if len(words) == 1 {
		if strings.HasPrefix(cur, "-") {
			return WithPrefix(cur, l.Own)
		}
		return WithPrefix(cur, l.Commands)
	}
	c, ok := l.Lookup(words[0])
	if !ok {
		return nil
	}
	fs := c.Flags

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
		names = append(names, l.Anywhere...)
		return WithPrefix(cur, names)
	}
	slots := usageSlots(c.Usage)
	if len(slots) == 0 {
		return nil
	}
	if pos >= len(slots) {
		if last := slots[len(slots)-1]; !last.repeat {
			return nil
		}
		pos = len(slots) - 1
	}
	return l.fill(slots[pos], cur)
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
		return []string{FilesDirective}
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
// for "name-i", commands for "command", file names (FilesDirective) for
// "dir" and "file", nothing for a value in capitals ("N", "+N"); any
// other word stands for itself ("nginx", "bash", "max").
func (l Line) fill(s slot, cur string) []string {
	var out []string
	for _, alt := range s.alts {
		switch strings.ToLower(alt) {
		case "name":
			out = append(out, projectNames(l.Entries())...)
		case "name-i":
			out = append(out, instanceNames(l.Entries())...)
		case "command":
			out = append(out, l.Commands...)
		case "dir", "file":
		default:
			if strings.ToUpper(alt) == alt {
				continue // a value to type (N, +N): nothing bm2 could list
			}
			out = append(out, alt)
		}
	}
	out = WithPrefix(cur, out)
	for _, alt := range s.alts {
		if l := strings.ToLower(alt); l == "dir" || l == "file" {
			out = append(out, FilesDirective)
			break
		}
	}
	return out
}

// projectNames are the names of the registered projects, valid or not.
func projectNames(entries []config.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// instanceNames are <name>-<i> for every instance of every valid project.
func instanceNames(entries []config.Entry) []string {
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

// WithPrefix keeps the candidates that start with prefix, sorted, once
// each.
func WithPrefix(prefix string, cands []string) []string {
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
