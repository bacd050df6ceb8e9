package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/bm2dev/bm2/units"
)

// Health is the HTTP health check of a project's instances, the health_*
// keys (bm2.toml(5), HEALTH CHECKS). The zero value, Path "", is no check:
// then every other field is zero too.
type Health struct {
	// Path is health_path: what each check asks for with GET, "/healthz".
	Path string
	// Interval is health_interval_ms: the time between two checks.
	Interval time.Duration
	// Timeout is health_timeout_ms: how long one check waits for the
	// status line of the answer.
	Timeout time.Duration
	// Failures is health_failures: how many checks in a row must fail
	// before the instance is restarted.
	Failures int
	// Port is health_port: instance i answers the checks on Port+i (the
	// surge of a reload on Port+instances); 0 means on the instance's own
	// port (fork mode only).
	Port int
}

// Defaults and limits of the health check, documented in bm2.toml(5).
const (
	DefaultHealthInterval = 5 * time.Second
	DefaultHealthTimeout  = 2 * time.Second
	DefaultHealthFailures = 3
	minHealthInterval     = 500 * time.Millisecond
	maxHealthInterval     = time.Hour
	minHealthTimeout      = 100 * time.Millisecond
	maxHealthTimeout      = time.Minute
	maxHealthFailures     = 100
	maxHealthPath         = 1024
	// minHealthPort is the lowest health_port: a port below 1024 would
	// give the app CAP_NET_BIND_SERVICE for a check on loopback.
	minHealthPort = 1024
)

// HealthChecked tells whether the project has a health check.
func (p *Project) HealthChecked() bool { return p.Health.Path != "" }

// HealthPort is the port instance i (units.Surge for the surge) answers
// the health check on: health_port+i (the surge: health_port+instances,
// its BM2_APP_INSTANCE), or without health_port its own port; 0 when
// the project has no health check.
func (p *Project) HealthPort(i int) int {
	switch {
	case !p.HealthChecked():
		return 0
	case p.Health.Port == 0:
		return p.InstancePort(i)
	case i == units.Surge:
		return p.Health.Port + p.Instances
	}
	return p.Health.Port + i
}

// HealthPorts is the range health_port occupies: one port per instance,
// and in cluster mode one more for the surge of a reload. ok is false
// without health_port.
func (p *Project) HealthPorts() (r PortRange, ok bool) {
	if !p.HealthChecked() || p.Health.Port == 0 {
		return PortRange{}, false
	}
	n := p.Instances
	if p.Mode == Cluster {
		n++ // the surge
	}
	return PortRange{Lo: p.Health.Port, Hi: p.Health.Port + n - 1}, true
}

// healthPathChar tells the bytes a health_path may hold besides a
// %-escape: those of a URI's path and query (RFC 3986), nothing a unit
// file, a command line or an HTTP request line would read otherwise.
func healthPathChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@/?", c) >= 0
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func setHealthPath(v *validator, p *Project, k string, val any) {
	s := val.(string)
	if !strings.HasPrefix(s, "/") {
		v.add(k, ErrValue, "must start with /, like \"/healthz\", got %q: it is the path bm2 asks for on the instance's own port", s)
		return
	}
	if len(s) > maxHealthPath {
		v.add(k, ErrValue, "is %d bytes long, more than %d", len(s), maxHealthPath)
		return
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				i += 2
				continue
			}
			v.add(k, ErrValue, "%q has a %% that does not start an escape like %%20", s)
			return
		}
		if !healthPathChar(c) {
			v.add(k, ErrValue, "%q must not contain %q: write a URL path (and query) of A-Z a-z 0-9 - . _ ~ ! $ & ' ( ) * + , ; = : @ / ? and %%XX escapes", s, rune(c))
			return
		}
	}
	p.Health.Path = s
}

// healthValue is the get of a health_* key other than health_path: it is
// written only along with health_path, and only when not at its default.
func healthValue(f func(Health) (int, bool)) func(*Project) (any, bool) {
	return func(p *Project) (any, bool) {
		if !p.HealthChecked() {
			return nil, false
		}
		n, ok := f(p.Health)
		return n, ok
	}
}

// healthKeys are the keys that mean something only with health_path.
var healthKeys = []string{"health_interval_ms", "health_timeout_ms", "health_failures", "health_port"}

// health checks the health_* keys together, with the mode and the port
// ranges, once every key is read; without health_path it leaves no
// trace of them in the project.
func (v *validator) health(p *Project) {
	if _, set := v.where["health_path"]; !set || p.Health.Path == "" {
		if set {
			return // health_path itself is refused: its error says why
		}
		for _, k := range healthKeys {
			if _, ok := v.where[k]; ok {
				v.add(k, ErrValue, "needs health_path: the health check is on only when health_path names what to ask for, like health_path = \"/healthz\"")
			}
		}
		p.Health = Health{}
		return
	}
	h := &p.Health
	if h.Interval == 0 {
		h.Interval = DefaultHealthInterval
	}
	if h.Timeout == 0 {
		h.Timeout = DefaultHealthTimeout
	}
	if h.Failures == 0 {
		h.Failures = DefaultHealthFailures
	}
	if h.Timeout >= h.Interval {
		// The error is on a key the file sets, and says which value is
		// the other key's default and what to write instead.
		const why = "a check ends before the next one is due"
		_, ownInterval := v.where["health_interval_ms"]
		_, ownTimeout := v.where["health_timeout_ms"]
		interval, timeout := h.Interval.Milliseconds(), h.Timeout.Milliseconds()
		switch {
		case ownInterval && ownTimeout:
			v.add("health_timeout_ms", ErrValue, "must be less than health_interval_ms (%d), got %d: %s", interval, timeout, why)
		case ownInterval:
			v.add("health_interval_ms", ErrValue, "must be more than health_timeout_ms, %d by default, got %d: %s; raise it above %d, or write health_timeout_ms = %d",
				timeout, interval, why, timeout, interval/2)
		default:
			v.add("health_timeout_ms", ErrValue, "must be less than health_interval_ms, %d by default, got %d: %s; lower it below %d, or write health_interval_ms = %d",
				interval, timeout, why, interval, 2*timeout)
		}
	}
	if h.Port == 0 {
		if _, ok := v.where["health_port"]; !ok && p.IsWorker() {
			v.add("health_path", ErrValue, "needs health_port for a worker (a project without port): "+
				"set health_port = N and have instance i answer on N+i ($BM2_HEALTH_PORT)")
		}
		if _, ok := v.where["health_port"]; !ok && p.Mode == Cluster {
			v.add("health_path", ErrValue, "needs health_port in cluster mode: the instances share port %d and the kernel picks which one answers a check; "+
				"set health_port = N and have instance i answer on N+i ($BM2_HEALTH_PORT)", p.Port)
		}
		return
	}
	if h.Port < minHealthPort {
		v.add("health_port", ErrValue, "must be %d or more, got %d: the check is on loopback, and a lower port would need a capability the app does not have otherwise",
			minHealthPort, h.Port)
		return
	}
	r, _ := p.HealthPorts()
	if r.Hi > 65535 {
		v.add("health_port", ErrValue, "needs ports %s (one per instance%s), past 65535", r, surgeNote(p))
		return
	}
	if p.Port > 0 {
		if own := p.Ports(); own.Overlaps(r) {
			v.add("health_port", ErrValue, "health ports %s (one per instance%s) overlap the project's own port range %s: choose ports of their own",
				r, surgeNote(p), own)
		}
	}
	for _, n := range p.Sandbox.ExtraPorts {
		if r.Lo <= n && n <= r.Hi {
			v.add("health_port", ErrValue, "health ports %s (one per instance%s) hold %d, one of [sandbox] extra_ports: choose ports of their own",
				r, surgeNote(p), n)
		}
	}
}

// surgeNote says, in cluster mode, that the health range holds the
// surge's port too.
func surgeNote(p *Project) string {
	if p.Mode == Cluster {
		return ", and one for the surge of a reload"
	}
	return ""
}

// userScopeHealth refuses a health port an unprivileged user may not bind.
func (v *validator) userScopeHealth(p *Project, u *UserScope) {
	if r, ok := p.HealthPorts(); ok && r.Lo < u.MinPort {
		v.add("health_port", ErrValue, "%d is below net.ipv4.ip_unprivileged_port_start (%d): only root may bind it; in user scope use a port of %d or more",
			r.Lo, u.MinPort, u.MinPort)
	}
}

// HealthSummary is the check in a person's words, for bm2 check; "" for
// none: "GET /healthz on 127.0.0.1, port 4000+i, every 5s (timeout 2s);
// 3 failed in a row restart the instance".
func (p *Project) HealthSummary() string {
	if !p.HealthChecked() {
		return ""
	}
	port := "the instance's own port"
	switch {
	case p.Health.Port != 0:
		port = fmt.Sprintf("port %d+i", p.Health.Port)
	case p.Mode == Fork:
		port = fmt.Sprintf("port %d+i", p.Port)
	}
	return fmt.Sprintf("GET %s on 127.0.0.1, %s, every %s (timeout %s); %d failed in a row restart the instance",
		p.Health.Path, port, p.Health.Interval, p.Health.Timeout, p.Health.Failures)
}
