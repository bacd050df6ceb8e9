// Package importer is what bm2 import (and bm2 start <script>) needs of
// the host around packages ecosystem and convert: the ecosystem file
// found (Find) and read once (Load), the owner of an app's directory,
// the runtime an imported project would run, checked as bm2 check does,
// and the app `pm2 start app.js` would start (ScriptApp).
package importer

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/guess"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/pm2/convert"
	"github.com/bm2dev/bm2/internal/pm2/ecosystem"
	"github.com/bm2dev/bm2/internal/trust"
)

// Load reads the ecosystem file or dump.pm2 bm2 import was given
// (package ecosystem), once, through read (Env.ReadFile): JavaScript is
// evaluated by a node found in dirs (NodeDirs).
func Load(ctx context.Context, file string, dirs []string, read func(path string) (trust.File, error)) (convert.Source, *ecosystem.Evaluated, error) {
	return ecosystem.Load(ctx, file, ecosystem.Options{Dirs: dirs, Read: read})
}

// NodeDirs is where bm2 import looks for the node that evaluates a
// JavaScript ecosystem file: $PATH (path), then systemd's search path
// (runtimeDirs).
func NodeDirs(path string, runtimeDirs []string) []string {
	return append(filepath.SplitList(path), runtimeDirs...)
}

// DirOwner names a directory's owner when it is not root, from the
// user database accounts.
func DirOwner(dir string, accounts trust.Accounts) string {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil || st.Uid == 0 {
		return ""
	}
	if u, err := accounts.UserID(int(st.Uid)); err == nil {
		return u.Name
	}
	return strconv.Itoa(int(st.Uid))
}

// Host is what Runtime asks of the host: systemd's search path, who can
// replace a binary (Env.Replaceable), and a runtime's --version as an
// account (Env.RuntimeVersion).
type Host struct {
	Dirs        []string
	Replaceable func(path string) (string, bool)
	Version     func(ctx context.Context, id identity.Identity, path string) (string, error)
}

// Runtime checks the runtime an imported project would run, as bm2
// check does: systemd's search path, or runtime_path; its --version is
// asked as the user the file the app comes from speaks for (nobody for
// root's, or for a file no single user could have written), never as
// root, and never as whoever owns the binary (a link swapped after a look
// at it would run someone's program as them); run by root, a binary
// anyone but root can replace is not run at all.
func Runtime(ctx context.Context, h Host, kind config.Runtime, runtimePath string, owner int) string {
	command := string(kind)
	if runtimePath != "" {
		command = runtimePath
	}
	id := identity.Nobody
	if owner > 0 {
		if u, err := user.LookupId(strconv.Itoa(owner)); err == nil {
			if gid, err := strconv.Atoi(u.Gid); err == nil {
				id = identity.Identity{Name: u.Username, UID: owner, GID: gid}
			}
		}
	}
	ask := func(ctx context.Context, path string) (string, error) {
		if identity.Self().UID == 0 {
			// Not outside a sandbox: no project's sandbox exists yet.
			if who, ok := h.Replaceable(path); ok {
				return "", &jsruntime.NotRunError{Why: fmt.Sprintf("%s can be replaced by %s; the run wrapper checks it at each start", path, who)}
			}
		}
		return h.Version(ctx, id, path)
	}
	rc := jsruntime.Check(ctx, kind, command, h.Dirs, ask)
	if rc.OK() {
		return ""
	}
	return rc.Problem + " (" + jsruntime.Advice(kind) + ")"
}

// Names are the files bm2 import looks for without FILE, in order.
var Names = []string{"ecosystem.config.js", "ecosystem.config.cjs", "ecosystem.config.mjs",
	"ecosystem.config.json", "ecosystem.config.yaml", "ecosystem.config.yml", "ecosystem.json"}

// FindError is why Find found no file to import: none of Names in Dir,
// or more than one (Found).
type FindError struct {
	Dir   string
	Found []string
}

func (e *FindError) Error() string {
	if len(e.Found) == 0 {
		return fmt.Sprintf("no ecosystem file in %s (looked for %s)", e.Dir, strings.Join(Names, ", "))
	}
	return fmt.Sprintf("more than one ecosystem file here: %s", strings.Join(e.Found, ", "))
}

// Find is the one ecosystem file of Names in the current directory; a
// *FindError when there is none or more than one.
func Find() (string, error) {
	var found []string
	for _, n := range Names {
		if st, err := os.Stat(n); err == nil && st.Mode().IsRegular() {
			found = append(found, n)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	wd, _ := os.Getwd()
	return "", &FindError{Dir: wd, Found: found}
}

// IsEcosystemFile tells whether bm2 start takes file for an ecosystem
// file or a dump (and imports it) rather than a script: by its name.
func IsEcosystemFile(file string) bool {
	base := strings.ToLower(filepath.Base(file))
	switch {
	case strings.HasSuffix(base, ".pm2"), strings.HasSuffix(base, ".json"), strings.HasSuffix(base, ".json5"),
		strings.HasSuffix(base, ".yaml"), strings.HasSuffix(base, ".yml"):
		return true
	case strings.Contains(base, ".config."):
		return guess.IsScript(base) // ecosystem.config.js, pm2.config.cjs
	}
	return false
}

// ScriptApp is the app `pm2 start SCRIPT` would start, as an ecosystem
// app of one for package convert: script (an absolute path), run in its
// directory, named name; with instances ("4", "max"), in cluster mode;
// env, NAME=VALUE pairs (checked by the caller: a name given twice keeps
// its first place and its last value); args, the app's own arguments.
func ScriptApp(script, name, instances string, env, args []string) *convert.Object {
	app := &convert.Object{Values: map[string]any{}}
	set := func(k string, v any) {
		app.Keys = append(app.Keys, k)
		app.Values[k] = v
	}
	set("name", name)
	set("script", filepath.Base(script))
	set("cwd", filepath.Dir(script))
	if instances != "" {
		set("instances", instances)
		set("exec_mode", "cluster")
	}
	vars := &convert.Object{Values: map[string]any{}}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := vars.Values[k]; !dup {
			vars.Keys = append(vars.Keys, k)
		}
		vars.Values[k] = v
	}
	if len(vars.Keys) > 0 {
		set("env", vars)
	}
	if len(args) > 0 {
		list := make([]any, len(args))
		for i, s := range args {
			list[i] = s
		}
		set("args", list)
	}
	return app
}
