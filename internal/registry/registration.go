package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/safefs"
)

// Registration is what bm2 serve writes for a project: the project file,
// which every user may read, and its private part ([env] and the webhook),
// which only root may (config.Marshal).
type Registration struct {
	P *config.Project
	// Public and Private are what is written: the project file and its
	// private part (nil: none).
	Public, Private []byte
	OldPublic       []byte      // what the project file held before, if it existed
	OldMode         os.FileMode // and its mode
	OldPrivate      []byte      // what the private part held before, nil if none
	Existed         bool        // the project file was there before
	// Changed: writing it changes what is registered.
	Changed bool
	// KeepPrivate: only the project file is written (bm2 scale); the
	// private part is left as it is, and Undo does not touch it.
	KeepPrivate bool
}

// New works out what to write for p, parsed with opts (the scope's
// config.Options), and whether anything changes. A hand-written file that means the same is left alone, unless
// it holds secrets every user may read: those move to the private part.
func New(p *config.Project, opts config.Options) (*Registration, error) {
	r := &Registration{P: p}
	r.Public, r.Private = config.Marshal(p)
	src := config.Source{Path: p.File, Data: r.Public, PrivatePath: config.PrivatePath(p.File), PrivateData: r.Private}
	if q, err := config.ParseSource(src, opts); err != nil || !config.Equal(p, q) {
		return nil, fmt.Errorf("internal error: the registered files would not read back as the project (%v); please report this", err)
	}
	old, err := os.ReadFile(p.File)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", p.File, err)
	}
	r.Existed = err == nil
	if r.Existed {
		r.OldPublic, r.OldMode = old, 0o644
		if st, err := os.Stat(p.File); err == nil {
			r.OldMode = st.Mode().Perm()
		}
	}
	r.OldPrivate, err = os.ReadFile(src.PrivatePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", src.PrivatePath, err)
	}
	r.Changed = !bytes.Equal(old, r.Public) || !bytes.Equal(r.OldPrivate, r.Private)
	if r.Changed && r.Existed {
		oldSrc := config.Source{Path: p.File, Data: old, PrivatePath: src.PrivatePath, PrivateData: r.OldPrivate}
		if q, err := config.ParseSource(oldSrc, opts); err == nil && !q.SecretsInFile {
			if q.Source == "" {
				// Registered before bm2 recorded the source, from where
				// this one comes (CheckOwner): not a change to restart for.
				q.Source = p.Source
			}
			if config.Equal(p, q) {
				r.Changed = false
			}
		}
	}
	return r, nil
}

// Write registers the project: the private part first (so the project
// file never names secrets that are not in place), then the project file;
// if that fails, the private part is put back as it was.
func (r *Registration) Write() error {
	priv := config.PrivatePath(r.P.File)
	if r.Private != nil && !r.KeepPrivate {
		if err := os.MkdirAll(filepath.Dir(priv), 0o700); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(priv), err)
		}
		if err := safefs.Write(priv, r.Private, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", priv, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(r.P.File), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(r.P.File), err)
	}
	if err := safefs.Write(r.P.File, r.Public, 0o644); err != nil {
		if r.KeepPrivate {
			return fmt.Errorf("write %s: %w", r.P.File, err)
		}
		if r.OldPrivate != nil {
			_ = safefs.Write(priv, r.OldPrivate, 0o600)
		} else if r.Private != nil {
			_ = safefs.Remove(priv)
		}
		return fmt.Errorf("write %s: %w", r.P.File, err)
	}
	if r.Private == nil && r.OldPrivate != nil && !r.KeepPrivate {
		if err := safefs.Remove(priv); err != nil {
			return fmt.Errorf("remove %s: %w", priv, err)
		}
	}
	return nil
}

// Undo takes back what Write did: the previous project file and private
// part are put back, or removed when there were none. The private part
// goes first when a project file stays and last when it goes, in the
// order Write keeps: no project file is left naming secrets that are not
// in place.
func (r *Registration) Undo() error {
	priv := config.PrivatePath(r.P.File)
	restorePrivate := func() error {
		switch {
		case r.KeepPrivate:
		case r.OldPrivate != nil:
			if err := safefs.Write(priv, r.OldPrivate, 0o600); err != nil {
				return fmt.Errorf("write %s: %w", priv, err)
			}
		case r.Private != nil:
			if err := safefs.Remove(priv); err != nil {
				return fmt.Errorf("remove %s: %w", priv, err)
			}
		}
		return nil
	}
	if !r.Existed {
		if err := safefs.Remove(r.P.File); err != nil {
			return fmt.Errorf("remove %s: %w", r.P.File, err)
		}
		return restorePrivate()
	}
	if err := restorePrivate(); err != nil {
		return err
	}
	if err := safefs.Write(r.P.File, r.OldPublic, r.OldMode); err != nil {
		return fmt.Errorf("write %s: %w", r.P.File, err)
	}
	return nil
}
