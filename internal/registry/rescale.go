package registry

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/bm2dev/bm2/internal/config"
)

// Rescaled is the registration of q, p with another count (bm2 scale):
// the project file as Marshal writes it, the private part left as it is.
// A file written by hand is rewritten only when that loses nothing its
// author wrote: one with comments of its own is refused (its author
// changes instances = there, and scale applies it). A refusal is a
// *Blocked.
func (s Store) Rescaled(p, q *config.Project) (*Registration, error) {
	reg, err := New(q, s.Options)
	if err != nil {
		return nil, err
	}
	if !reg.Existed {
		return nil, fmt.Errorf("%s is gone: nothing was changed", p.File)
	}
	// The private part stays as it is, byte for byte: the new project
	// file must read back as q beside it.
	src := config.Source{Path: q.File, Data: reg.Public, PrivatePath: config.PrivatePath(q.File), PrivateData: reg.OldPrivate}
	if r, err := config.ParseSource(src, s.Options); err != nil || !config.Equal(q, r) {
		hint := "`bm2 serve` in " + p.Cwd + " registers it afresh"
		if r == nil || p.SecretsInFile {
			hint = "`bm2 migrate` moves the secrets out of " + p.File + " first"
		}
		return nil, &Blocked{Hint: hint,
			Err: fmt.Errorf("%s cannot be rewritten without changing its private part %s: nothing was changed", p.File, config.PrivatePath(p.File))}
	}
	reg.Private, reg.KeepPrivate = reg.OldPrivate, true
	reg.Changed = !bytes.Equal(reg.OldPublic, reg.Public)
	if canon, _ := config.Marshal(p); reg.Changed && !bytes.Equal(reg.OldPublic, canon) && config.HasOwnComments(reg.OldPublic) {
		return nil, &Blocked{
			Hint: fmt.Sprintf("set instances = %s in %s yourself, then run `bm2 scale %s %d`: it applies the file's count without restarting the instances that stay",
				CountText(q), p.File, p.Name, q.Instances),
			Err: fmt.Errorf("%s was edited by hand and has comments that bm2 did not write; rewriting it would lose them, so bm2 scale leaves it alone", p.File)}
	}
	return reg, nil
}

// CountText is a project's instances = value as its file has it.
func CountText(p *config.Project) string {
	if p.MaxInstance {
		return fmt.Sprintf("\"max\", %d", p.Instances)
	}
	return strconv.Itoa(p.Instances)
}
