package preflight

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/trust"
)

// Resolve resolves a project dir (its bm2.toml, read as bm2 serve
// reads it), a project file or the name of a registered project, and
// returns the project, the file it came from and who speaks for that
// file: a registered project's file is root's (serve wrote it; only root
// may write there). named says arg was given (not the default
// ./bm2.toml); with refused, a registered project whose port range is
// refused is returned (bm2 check reports the conflict), without it that
// is an error, as for any project systemd has no units for.
func Resolve(c *control.Client, arg string, named, refused bool) (*config.Project, string, trust.Origin, error) {
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		return dirFile(c, filepath.Join(arg, control.ProjectFileName))
	case err == nil && filepath.Base(arg) == control.ProjectFileName && !onSearchPath(c, arg):
		return dirFile(c, arg)
	case err == nil:
		f, rerr := c.ReadFile(arg)
		foreign := rerr == nil && f.Speaker() != 0 && f.Speaker() != c.Scope().Layout().UID
		if rerr != nil {
			return nil, "", trust.Origin{}, fmt.Errorf("read project file: %w", rerr)
		}
		opts := c.Scope().Options()
		opts.Foreign = foreign
		p, perr := config.Parse(arg, f.Data, opts)
		if p != nil && f.Speaker() != 0 {
			// What a file says of its own source is not its owner's to
			// say: the one-owner check looks at where it really is.
			p.Source = f.Path
		}
		return p, arg, trust.OriginOf(arg, f), perr
	case errors.Is(err, fs.ErrNotExist) && named && !strings.ContainsAny(arg, "/.") && arg != control.ProjectFileName:
		e, ferr := c.Projects().Find(arg)
		if ferr != nil {
			return nil, "", trust.Origin{}, &control.Error{Code: control.NoProject, Fix: "pass a project dir, a project file or the name of a registered project (`bm2 list`)",
				Err: fmt.Errorf("no file, dir or registered project named %s", arg)}
		}
		root := trust.Origin{File: e.Path}
		if !refused {
			p, uerr := control.Usable(e)
			return p, e.Path, root, uerr
		}
		if e.Project == nil {
			// Nothing parsed: the error is all there is. (A refused range
			// keeps its project, and the conflict check reports it.)
			return nil, e.Path, root, usableErr(e)
		}
		return e.Project, e.Path, root, nil
	case errors.Is(err, fs.ErrNotExist) && !named:
		return dirFile(c, arg)
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", trust.Origin{}, &control.Error{Code: control.Invalid, Fix: "pass a project dir, a project file or the name of a registered project (`bm2 list`)",
			Err: fmt.Errorf("%s does not exist", arg)}
	default:
		return nil, "", trust.Origin{}, fmt.Errorf("read %s: %w", arg, err)
	}
}

func dirFile(c *control.Client, file string) (*config.Project, string, trust.Origin, error) {
	abs, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, file, trust.Origin{}, fmt.Errorf("resolve %s: %w", file, err)
	}
	p, o, err := c.Projects().DirProject(file, abs)
	return p, file, o, err
}

// onSearchPath tells whether a file lives in one of the search path's
// directories (a registered project file rather than a project dir's).
func onSearchPath(c *control.Client, file string) bool {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return false
	}
	for _, d := range c.Projects().SearchPath {
		if ad, err := filepath.Abs(d); err == nil && ad == dir {
			return true
		}
	}
	return false
}

// usableErr is usable's error for an entry without a project; never nil.
func usableErr(e config.Entry) error {
	if _, err := control.Usable(e); err != nil {
		return err
	}
	return fmt.Errorf("project %s: %s has no project", e.Name, e.Path)
}
