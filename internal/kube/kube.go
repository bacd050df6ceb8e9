package kube

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/gateway"
)

// Classes of the problems Export reports in a project file, as
// config.Error values (file:line: key: message). Every one wraps exactly
// one of them.
var (
	// ErrUnmappable: the project cannot run in Kubernetes as it says (a
	// runtime outside any image, a root account, a size relative to the
	// host's memory): nothing is exported.
	ErrUnmappable = errors.New("no Kubernetes equivalent")
	// ErrDropped: a setting that means something on a bm2 host and
	// nothing in a pod; the export goes on without it, and says so.
	ErrDropped = errors.New("dropped")
)

// OptionError is an option that cannot be used, as for the gateways.
type OptionError = gateway.OptionError

// Source is one project to export, with what its errors name.
type Source struct {
	Project *config.Project
	// File is the project file the errors name (a project dir's
	// bm2.toml, a registered /etc/bm2/<name>.toml); Project.File when "".
	File string
	// Lines is config.KeyLines of File: the line of each key it sets.
	// nil: errors name no line.
	Lines map[string]int
}

func (s Source) file() string {
	if s.File != "" {
		return s.File
	}
	return s.Project.File
}

// Options shape the export beyond what the project files say.
type Options struct {
	// Image is the container image that holds the app at its cwd and its
	// runtime. Required: no image bm2 could name has the app in it.
	Image string
	// Namespace of every object; "" leaves it out (kubectl's current
	// namespace applies).
	Namespace string
	// Ordinal exports a StatefulSet (with the headless Service it needs)
	// instead of a Deployment, so that each pod has a number,
	// BM2_APP_INSTANCE, as a bm2 instance does.
	Ordinal bool
	// Gateway, when set, adds an HTTPRoute whose parent is the Gateway of
	// that name ("NAME", or "NAMESPACE/NAME" for one in another
	// namespace).
	Gateway string
	// Hostnames of the HTTPRoute (bm2 gateway --server-name); none: any.
	Hostnames []string
	// PathPrefix puts every project's route at its name below it, as bm2
	// gateway --path-prefix does ("/" gives /api/); several projects with
	// a Gateway need it.
	PathPrefix string
	// Secrets writes the values of [env] into a Secret of their own
	// (File.Secret); without it the Secret is the user's to create.
	Secrets bool
}

// File is one file of the export: a project's manifests, or its Secret.
type File struct {
	Project string
	// Name is the file's name in the output directory: <name>.yaml, or
	// <name>.secret.yaml for the Secret.
	Name string
	Data []byte
	// Secret: Data holds [env] values. It is written with mode 0600 and
	// never printed.
	Secret bool
	// Kinds are the kinds of its objects, in order ("Service",
	// "Deployment", ...).
	Kinds []string
}

// Perm is the mode the file is written with.
func (f File) Perm() os.FileMode {
	if f.Secret {
		return 0o600
	}
	return 0o644
}

// Result is what Export produces.
type Result struct {
	// Files, by project name: each project's manifests, then its Secret
	// (with Options.Secrets and an [env]).
	Files []File
	// Warnings are the settings left out (ErrDropped), by project, in
	// line order. The manifests say them too, in comments.
	Warnings []*config.Error
}

// Manifests is every file that is not a Secret, one YAML stream: what
// `bm2 export kube` prints.
func (r *Result) Manifests() []byte {
	var out []byte
	for _, f := range r.Files {
		if !f.Secret {
			out = append(out, f.Data...)
		}
	}
	return out
}

// Export turns projects into Kubernetes manifests: for each, a Service
// and a Deployment (or, with Options.Ordinal, a headless Service and a
// StatefulSet), an HTTPRoute with Options.Gateway, and with
// Options.Secrets a Secret of its [env]. It is a pure function: the same
// sources and options give the same bytes. An option that cannot be used
// is an *OptionError; a project that cannot be mapped is a config.Errors
// naming its file, line and key; either way there is no Result.
func Export(sources []Source, opts Options) (*Result, error) {
	o, err := checkOptions(opts, true)
	if err != nil {
		return nil, err
	}
	ms, err := plan(sources, o, true)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for _, m := range ms {
		res.Files = append(res.Files, m.manifests())
		if o.Secrets && len(m.p.Env) > 0 {
			res.Files = append(res.Files, m.secretFile())
		}
		res.Warnings = append(res.Warnings, m.warnings...)
	}
	return res, nil
}

// Routes is the HTTPRoute of each project alone, for a cluster that runs
// the Services already (`bm2 gateway httproute`). Options.Gateway is
// required; Image, Ordinal and Secrets play no part.
func Routes(sources []Source, opts Options) ([]byte, error) {
	if opts.Gateway == "" {
		return nil, &OptionError{Option: "gateway", Reason: "required: the Gateway the routes attach to (NAME, or NAMESPACE/NAME)"}
	}
	o, err := checkOptions(opts, false)
	if err != nil {
		return nil, err
	}
	ms, err := plan(sources, o, false)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, m := range ms {
		out = append(out, m.routeFile()...)
	}
	return out, nil
}

// model is one project on its way out: validated, with everything its
// manifests say.
type model struct {
	src      Source
	p        *config.Project
	o        options
	name     string // the objects' name: the project's, '_' as '-'
	route    string // the HTTPRoute's path prefix, "" for every path
	warnings []*config.Error
	notes    []string
}

// plan checks every project and builds its model; all of them, or the
// problems of all of them. full: the whole export (not only a route).
func plan(sources []Source, o options, full bool) ([]*model, error) {
	if len(sources) == 0 {
		return nil, &OptionError{Option: "projects", Reason: "no project to export"}
	}
	sorted := make([]Source, 0, len(sources))
	for _, s := range sources {
		if s.Project == nil {
			return nil, &OptionError{Option: "projects", Reason: "a project is missing (nil)"}
		}
		sorted = append(sorted, s)
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Project.Name < sorted[j].Project.Name })
	var errs config.Errors
	var ms []*model
	byName := map[string]string{}
	for _, s := range sorted {
		m := &model{src: s, p: s.Project, o: o, name: objectName(s.Project.Name)}
		problems := m.check(full)
		if prev, dup := byName[m.name]; dup && len(problems) == 0 {
			problems = append(problems, m.problem("name", ErrUnmappable,
				"%q and %q are both %q as Kubernetes names ('_' becomes '-'): rename one of them", prev, m.p.Name, m.name))
		}
		byName[m.name] = m.p.Name
		if len(problems) > 0 {
			errs = append(errs, problems...)
			continue
		}
		if o.prefix != "" {
			m.route = gateway.ProjectPath(o.prefix, m.p.Name)
		}
		ms = append(ms, m)
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool {
			if errs[i].File != errs[j].File {
				return errs[i].File < errs[j].File
			}
			return errs[i].Line < errs[j].Line
		})
		return nil, errs
	}
	var routed []string // a worker gets no route (Routes refuses it)
	for _, m := range ms {
		if !m.p.IsWorker() {
			routed = append(routed, m.p.Name)
		}
	}
	if o.gateway.name != "" && o.prefix == "" && len(routed) > 1 {
		names := routed
		return nil, &OptionError{Option: "projects", Value: strings.Join(names, " "),
			Reason: "several projects need --path-prefix (one path each under the same hostnames); without it each route takes every path, and theirs would conflict"}
	}
	return ms, nil
}

// problem is a config.Error about key of the model's file.
func (m *model) problem(key string, class error, format string, args ...any) *config.Error {
	base, _, _ := strings.Cut(key, "[")
	line := m.src.Lines[base]
	return &config.Error{File: m.src.file(), Line: line, Key: key, Msg: fmt.Sprintf(format, args...), Err: class}
}

// drop records a setting left out, with why.
func (m *model) drop(key, format string, args ...any) {
	m.warnings = append(m.warnings, m.problem(key, ErrDropped, format, args...))
}

// note adds a paragraph to the comment at the top of the manifests.
func (m *model) note(format string, args ...any) {
	m.notes = append(m.notes, fmt.Sprintf(format, args...))
}
