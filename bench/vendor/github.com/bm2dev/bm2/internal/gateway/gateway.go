package gateway

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
)

// Kind is a gateway bm2 can configure.
type Kind string

const (
	KindNginx Kind = "nginx"
	KindCaddy Kind = "caddy"
)

// Kinds lists every Kind, in the order the docs name them.
func Kinds() []Kind { return []Kind{KindNginx, KindCaddy} }

// DefaultListen is where the gateway listens without Options.Listen.
const DefaultListen = "80"

// Settings of the generated configuration (see the package comment for
// why each has its value).
const (
	keepaliveConns   = 32 // idle upstream connections nginx keeps per worker
	keepaliveTimeout = "4s"
	connectTimeout   = "2s"
	fleetMaxFails    = 3
	fleetFailTimeout = "2s"
	caddyTryDuration = "5s"
	caddyTryInterval = "100ms"
	localHost        = "127.0.0.1"
)

// Options shape the configuration beyond what the project files say.
type Options struct {
	// ServerNames are the host names the gateway answers for (nginx
	// server_name, Caddy site addresses). None: any host.
	ServerNames []string
	// Listen is a port ("80") or an address and port ("127.0.0.1:8080",
	// "[::]:80"); "" means DefaultListen.
	Listen string
	// Hosts run the projects: IP addresses or DNS names, in the order
	// given. None means this host, 127.0.0.1, and no fleet.
	Hosts []string
	// PathPrefix, when set, serves every project under one server, each
	// at <PathPrefix>/<name>/ ("/" gives /api/, "/apps" gives
	// /apps/api/); the path reaches the app unchanged. Unset, each
	// project has a server of its own, and then only one project can be
	// printed (two servers with the same names would conflict).
	PathPrefix string
}

// Nginx renders an nginx snippet for conf.d (http context): an upstream
// per project and the server blocks in front of them.
func Nginx(projects []*config.Project, opts Options) ([]byte, error) {
	m, err := build(projects, opts)
	if err != nil {
		return nil, err
	}
	return m.nginx(), nil
}

// Caddy renders a Caddyfile site block (or one per project without a path
// prefix; several projects need one).
func Caddy(projects []*config.Project, opts Options) ([]byte, error) {
	m, err := build(projects, opts)
	if err != nil {
		return nil, err
	}
	return m.caddy(), nil
}

// Render is Nginx or Caddy, by kind.
func Render(kind Kind, projects []*config.Project, opts Options) ([]byte, error) {
	switch kind {
	case KindNginx:
		return Nginx(projects, opts)
	case KindCaddy:
		return Caddy(projects, opts)
	}
	return nil, &OptionError{Option: "kind", Value: string(kind), Reason: "not a gateway bm2 knows (nginx, caddy)"}
}

// OptionError is an option value that cannot be used: it would not mean
// what it says, or could change the configuration around it.
type OptionError struct {
	Option string // "server-name", "listen", "host", "path-prefix", "projects"
	Value  string
	Reason string
}

func (e *OptionError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Option, e.Reason)
	}
	return fmt.Sprintf("%s %s: %s", e.Option, strconv.Quote(e.Value), e.Reason)
}

// ProjectError is a project the gateway cannot be configured for.
type ProjectError struct {
	Project string
	Reason  string
}

func (e *ProjectError) Error() string {
	return fmt.Sprintf("project %s: %s", strconv.Quote(e.Project), e.Reason)
}

// model is what both renderers print: validated, in output order.
type model struct {
	kind      Kind // set by the renderer, for the header
	listen    listenAddr
	names     []string
	prefix    string // normalized: "" (a server per project), "/" or "/apps/"
	fleet     bool
	hosts     []string // as they appear in an address: IPv6 in brackets
	upstreams []upstream
}

type upstream struct {
	p       *config.Project
	name    string   // bm2_<project>
	servers []string // host:port, host-major
	path    string   // the location with a path prefix: /api/
}

// retries tells whether a failed connection can go to another server
// line (backups aside).
func (u upstream) retries() bool { return len(u.servers) > 1 }

type listenAddr struct {
	addr string // "" (every address), "127.0.0.1" or "[::1]"
	port int
}

func build(projects []*config.Project, opts Options) (*model, error) {
	m := &model{}
	var errs []error
	var err error
	if m.listen, err = parseListen(opts.Listen); err != nil {
		errs = append(errs, err)
	}
	seenName := map[string]bool{}
	for _, n := range opts.ServerNames {
		if err := checkServerName(n); err != nil {
			errs = append(errs, err)
			continue
		}
		if seenName[strings.ToLower(n)] {
			errs = append(errs, &OptionError{Option: "server-name", Value: n, Reason: "given twice"})
			continue
		}
		seenName[strings.ToLower(n)] = true
		m.names = append(m.names, n)
	}
	m.fleet = len(opts.Hosts) > 0
	seenHost := map[string]bool{}
	for _, h := range opts.Hosts {
		addr, err := parseHost(h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if seenHost[addr] {
			errs = append(errs, &OptionError{Option: "host", Value: h, Reason: "given twice"})
			continue
		}
		seenHost[addr] = true
		m.hosts = append(m.hosts, addr)
	}
	if !m.fleet {
		m.hosts = []string{localHost}
	}
	if opts.PathPrefix != "" {
		if m.prefix, err = parsePrefix(opts.PathPrefix); err != nil {
			errs = append(errs, err)
		}
	}

	if len(projects) == 0 {
		errs = append(errs, &OptionError{Option: "projects", Reason: "no project to put behind the gateway"})
	}
	var sorted []*config.Project
	for _, p := range projects {
		if p == nil {
			errs = append(errs, &ProjectError{Reason: "missing (nil)"})
			continue
		}
		sorted = append(sorted, p)
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for i, p := range sorted {
		if err := checkProject(p, m.fleet); err != nil {
			errs = append(errs, err)
			continue
		}
		if i > 0 && sorted[i-1].Name == p.Name {
			errs = append(errs, &ProjectError{Project: p.Name, Reason: "given twice"})
			continue
		}
		u := upstream{p: p, name: "bm2_" + p.Name}
		for _, h := range m.hosts {
			if p.Mode == config.Fork {
				for k := 0; k < p.Instances; k++ {
					u.servers = append(u.servers, h+":"+strconv.Itoa(p.InstancePort(k)))
				}
			} else {
				u.servers = append(u.servers, h+":"+strconv.Itoa(p.Port))
			}
		}
		if m.prefix != "" {
			u.path = ProjectPath(m.prefix, p.Name)
		}
		m.upstreams = append(m.upstreams, u)
	}
	if m.prefix == "" && len(m.upstreams) > 1 {
		names := make([]string, len(m.upstreams))
		for i, u := range m.upstreams {
			names[i] = u.p.Name
		}
		errs = append(errs, &OptionError{Option: "projects", Value: strings.Join(names, " "),
			Reason: "several projects need --path-prefix (one location each under one server); without it each project has a server of its own, and theirs would have the same names"})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

// checkProject makes sure a project can only print what a valid project
// file means, whatever built it.
func checkProject(p *config.Project, fleet bool) error {
	if !validName(p.Name) {
		return &ProjectError{Project: p.Name, Reason: "not a valid project name ([a-z0-9][a-z0-9_-]*, at most 64)"}
	}
	if p.IsWorker() {
		return &ProjectError{Project: p.Name, Reason: "is a worker (no port): it serves nothing a gateway could pass requests to"}
	}
	if p.Instances < 1 || p.Port < 1 || p.Port > 65535 || p.Ports().Hi > 65535 {
		return &ProjectError{Project: p.Name, Reason: fmt.Sprintf("port %d with %d instances is not a port range", p.Port, p.Instances)}
	}
	switch p.Mode {
	case config.Cluster, config.Fork:
	default:
		return &ProjectError{Project: p.Name, Reason: fmt.Sprintf("unknown exec_mode %q", p.Mode)}
	}
	if fleet && p.Mode == config.Fork && p.MaxInstance {
		return &ProjectError{Project: p.Name, Reason: `instances = "max" in fork mode: the ports depend on each host's CPUs, which the gateway cannot know; give instances a number for a fleet`}
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

// parseListen reads "80", "127.0.0.1:8080" or "[::]:80".
func parseListen(s string) (listenAddr, error) {
	if s == "" {
		s = DefaultListen
	}
	bad := func(why string) (listenAddr, error) {
		return listenAddr{}, &OptionError{Option: "listen", Value: s, Reason: why}
	}
	if port, ok := parsePort(s); ok {
		return listenAddr{port: port}, nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return bad("want a port (80) or an IP address and port (127.0.0.1:8080, [::]:80)")
	}
	if ap.Addr().Zone() != "" {
		return bad("an IPv6 zone cannot be listened on by both nginx and Caddy")
	}
	if ap.Port() == 0 {
		return bad("port 0")
	}
	return listenAddr{addr: hostText(ap.Addr()), port: int(ap.Port())}, nil
}

func parsePort(s string) (int, bool) {
	if s == "" || len(s) > 5 || strings.TrimLeft(s, "0123456789") != "" || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= 65535
}

// hostText is an address as it appears before ":port": IPv6 in brackets.
func hostText(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		return "[" + a.String() + "]"
	}
	return a.String()
}

// parseHost reads an IP address (IPv6 with or without brackets) or a DNS
// name, and returns it as it appears before ":port".
func parseHost(s string) (string, error) {
	inner := s
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		inner = s[1 : len(s)-1]
	}
	if a, err := netip.ParseAddr(inner); err == nil {
		if a.Zone() != "" {
			return "", &OptionError{Option: "host", Value: s, Reason: "an IPv6 zone is not an address a gateway can share"}
		}
		if a.IsUnspecified() {
			return "", &OptionError{Option: "host", Value: s, Reason: "the unspecified address is no host to connect to"}
		}
		return hostText(a), nil
	}
	if inner != s || !validDNSName(s, false) {
		return "", &OptionError{Option: "host", Value: s, Reason: "want an IP address or a DNS name (letters, digits, '-' and '.')"}
	}
	return strings.ToLower(s), nil
}

// CheckServerName checks a --server-name value: a DNS name, optionally
// starting with "*.". The error is an *OptionError.
func CheckServerName(s string) error { return checkServerName(s) }

// ParsePathPrefix checks a --path-prefix value and normalizes it to "/"
// or "/a/b/"; the error is an *OptionError. Each project is then served
// at ProjectPath below it.
func ParsePathPrefix(s string) (string, error) { return parsePrefix(s) }

// ProjectPath is where a project is served below a normalized path
// prefix: "/" and "api" give "/api/", "/apps/" gives "/apps/api/".
func ProjectPath(prefix, project string) string { return prefix + project + "/" }

func checkServerName(s string) error {
	if !validDNSName(s, true) {
		return &OptionError{Option: "server-name", Value: s,
			Reason: "want a DNS name (letters, digits, '-' and '.'), optionally starting with '*.'"}
	}
	return nil
}

// validDNSName accepts host names: labels of letters, digits and '-' (not
// at either end), at most 63 each, 253 in all; wildcard allows a leading
// "*." label.
func validDNSName(s string, wildcard bool) bool {
	if wildcard {
		s = strings.TrimPrefix(s, "*.")
	}
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// parsePrefix normalizes a path prefix to "/" or "/a/b/": segments of
// letters, digits and - . _ ~, none of them "." or "..".
func parsePrefix(s string) (string, error) {
	bad := func(why string) (string, error) {
		return "", &OptionError{Option: "path-prefix", Value: s, Reason: why}
	}
	if !strings.HasPrefix(s, "/") {
		return bad("must start with /")
	}
	if len(s) > 1024 {
		return bad("longer than 1024 bytes")
	}
	trimmed := strings.Trim(s, "/")
	if trimmed == "" {
		if s != "/" {
			return bad("empty path segment (//)")
		}
		return "/", nil
	}
	if strings.HasSuffix(s, "//") {
		return bad("empty path segment (//)")
	}
	for _, seg := range strings.Split(trimmed, "/") {
		if seg == "" {
			return bad("empty path segment (//)")
		}
		if seg == "." || seg == ".." {
			return bad("a path segment . or .. would not name the path it says")
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
				return bad("want path segments of letters, digits and - . _ ~")
			}
		}
	}
	return "/" + trimmed + "/", nil
}

// describe is the comment above a project's upstream.
func (m *model) describe(u upstream) []string {
	p := u.p
	where := "on this host"
	if m.fleet {
		where = "on each of " + strings.Join(m.hosts, ", ")
	}
	if p.Mode == config.Fork {
		noun := "instance"
		if p.Instances > 1 {
			noun = "instances"
		}
		ports := "ports " + p.Ports().String()
		if p.Instances == 1 {
			ports = "port " + strconv.Itoa(p.Port)
		}
		lines := []string{
			fmt.Sprintf("%s: %d %s in fork mode on %s, %s.", p.Name, p.Instances, noun, ports, where),
			"One " + m.line() + " per instance: each listens on a port of its own.",
		}
		if p.MaxInstance {
			lines = append(lines, `instances = "max": one per CPU of the host that printed this.`)
		}
		if p.Instances == 1 && !m.fleet {
			lines = append(lines, "With one instance there is no other to retry on while it restarts.")
		}
		return lines
	}
	return []string{
		fmt.Sprintf("%s: %d x cluster on port %d, %s.", p.Name, p.Instances, p.Port, where),
		"One " + m.line() + " per host: the instances share the port (SO_REUSEPORT)",
		"and the kernel spreads the connections over them.",
	}
}

// line is what the renderer calls one address to proxy to.
func (m *model) line() string {
	if m.kind == KindCaddy {
		return "upstream"
	}
	return "server line"
}
