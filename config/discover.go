package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultSearchPath is where project files are looked for, highest priority
// first: the administrator's /etc, runtime files in /run, then files shipped
// by local installs and by packages.
var DefaultSearchPath = []string{"/etc/bm2", "/run/bm2", "/usr/local/lib/bm2", "/usr/lib/bm2"}

// SearchPathEnv names the variable that replaces the search path
// (colon-separated directories), for tests and debugging.
const SearchPathEnv = "BM2_CONFIG_PATH"

// SearchPath returns the directories to read, from $BM2_CONFIG_PATH when set
// (getenv is os.Getenv in production).
func SearchPath(getenv func(string) string) []string {
	if v := getenv(SearchPathEnv); v != "" {
		var dirs []string
		for _, d := range strings.Split(v, ":") {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
		return dirs
	}
	return append([]string(nil), DefaultSearchPath...)
}

// Source is one project file found along the search path, read into memory.
type Source struct {
	Path string
	Data []byte
}

// Name is the project name the file implies.
func (s Source) Name() string { return Stem(s.Path) }

// Found is the result of reading the search path.
type Found struct {
	Sources []Source // one per project name, sorted by name
	Masked  []string // paths of files that mask a project (empty or -> /dev/null)
	Shadow  []string // paths hidden by a file of the same name earlier in the path
	Errors  []error  // unreadable directories or files; each names its path
}

// Discover reads every *.toml file along dirs. The first file of a given name
// wins; a missing directory is not an error. Files that are not regular files
// (after following symlinks), files whose name is not a valid project name
// and unreadable files are reported in Errors and skipped; they never stop
// the others from being read.
func Discover(dirs []string) Found {
	var f Found
	seen := make(map[string]bool)
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				f.Errors = append(f.Errors, fmt.Errorf("%s: %w", dir, err))
			}
			continue
		}
		for _, e := range entries { // ReadDir sorts by name
			if !strings.HasSuffix(e.Name(), ".toml") || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			name := Stem(p)
			if seen[name] {
				f.Shadow = append(f.Shadow, p)
				continue
			}
			if !nameRE.MatchString(name) || len(name) > maxNameLen {
				seen[name] = true
				f.Errors = append(f.Errors, &Error{File: p, Msg: fmt.Sprintf("%q is not a valid project name: use 1 to %d of a-z, 0-9, '-' and '_', starting with a letter or digit", name, maxNameLen), Err: ErrValue})
				continue
			}
			seen[name] = true
			if e.Type()&fs.ModeSymlink != 0 {
				if target, err := os.Readlink(p); err == nil && target == os.DevNull {
					f.Masked = append(f.Masked, p)
					continue
				}
			}
			st, err := os.Stat(p)
			if err != nil {
				f.Errors = append(f.Errors, fmt.Errorf("%s: %w", p, err))
				continue
			}
			if !st.Mode().IsRegular() {
				f.Errors = append(f.Errors, &Error{File: p, Msg: "not a regular file", Err: ErrValue})
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				f.Errors = append(f.Errors, fmt.Errorf("%s: %w", p, err))
				continue
			}
			if len(bytes.TrimSpace(data)) == 0 {
				f.Masked = append(f.Masked, p)
				continue
			}
			f.Sources = append(f.Sources, Source{Path: p, Data: data})
		}
	}
	sort.Slice(f.Sources, func(i, j int) bool { return f.Sources[i].Name() < f.Sources[j].Name() })
	return f
}
