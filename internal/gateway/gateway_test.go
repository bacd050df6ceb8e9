package gateway

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
)

// hostile are values that would end a directive, open or close a block,
// quote, start a comment or a variable, or break a line, if they reached
// the output.
var hostile = []string{
	"a;b", "a{", "a}", `a"b`, "a'b", "a\nb", "a\rb", "$host", "a b", "a\tb", "a#b",
	"example.com;\n    location / { return 200; }", "x\x00y", "a\\b", "a`b", "{remote_host}",
}

// Every hostile value is refused in every option that reaches the output,
// and the error names the option.
func TestHostileValuesAreRefused(t *testing.T) {
	ps := []*config.Project{loadProject(t, "fk")}
	for _, v := range hostile {
		for _, c := range []struct {
			option string
			opts   Options
		}{
			{"server-name", Options{ServerNames: []string{v}}},
			{"server-name", Options{ServerNames: []string{"*." + v}}},
			{"listen", Options{Listen: v}},
			{"listen", Options{Listen: "127.0.0.1:" + v}},
			{"host", Options{Hosts: []string{v}}},
			{"host", Options{Hosts: []string{"[" + v + "]"}}},
			{"path-prefix", Options{PathPrefix: "/" + v}},
			{"path-prefix", Options{PathPrefix: "/ok/" + v + "/"}},
		} {
			for _, kind := range Kinds() {
				out, err := Render(kind, ps, c.opts)
				var oe *OptionError
				if !errors.As(err, &oe) || oe.Option != c.option {
					t.Errorf("%s %s %q: err = %v, want an OptionError for %s; output:\n%s", kind, c.option, v, err, c.option, out)
				}
				if out != nil {
					t.Errorf("%s %s %q: printed something although it failed", kind, c.option, v)
				}
			}
		}
	}
}

// A project that no valid project file gives (built by hand, say) is
// refused too.
func TestHostileProjectsAreRefused(t *testing.T) {
	base := loadProject(t, "fk")
	cases := map[string]func(p *config.Project){
		"name with ;":     func(p *config.Project) { p.Name = "fk;" },
		"name with brace": func(p *config.Project) { p.Name = "fk{" },
		"name with space": func(p *config.Project) { p.Name = "fk x" },
		"name newline":    func(p *config.Project) { p.Name = "fk\nserver" },
		"name $":          func(p *config.Project) { p.Name = "$fk" },
		"upper case":      func(p *config.Project) { p.Name = "Fk" },
		"empty name":      func(p *config.Project) { p.Name = "" },
		"port 0":          func(p *config.Project) { p.Port = 0 },
		"port too high":   func(p *config.Project) { p.Port = 65535 }, // 3 instances: 65535~65537
		"no instances":    func(p *config.Project) { p.Instances = 0 },
		"unknown mode":    func(p *config.Project) { p.Mode = "fork;" },
	}
	if out, err := Nginx([]*config.Project{nil}, Options{}); err == nil || out != nil {
		t.Errorf("a nil project: %v", err)
	}
	for name, mutate := range cases {
		p := *base
		mutate(&p)
		for _, kind := range Kinds() {
			out, err := Render(kind, []*config.Project{&p}, Options{})
			var pe *ProjectError
			if !errors.As(err, &pe) || out != nil {
				t.Errorf("%s, %s: err = %v, output %q; want a ProjectError and no output", name, kind, err, out)
			}
		}
	}
}

func TestOptionsAccepted(t *testing.T) {
	ps := []*config.Project{loadProject(t, "api")}
	for _, o := range []Options{
		{Listen: "8080"}, {Listen: "0.0.0.0:80"}, {Listen: "[::]:443"}, {Listen: "[::1]:8080"},
		{ServerNames: []string{"Example.COM", "*.example.com", "a-b.c0"}},
		{Hosts: []string{"10.0.0.1", "fd00::1", "[fd00::2]", "app-1.internal", "::ffff:10.0.0.3"}},
		{PathPrefix: "/"}, {PathPrefix: "/apps"}, {PathPrefix: "/apps/"}, {PathPrefix: "/a.b/~c_d-e"},
	} {
		for _, kind := range Kinds() {
			if _, err := Render(kind, ps, o); err != nil {
				t.Errorf("%s %+v: %v", kind, o, err)
			}
		}
	}
}

func TestOptionsRefused(t *testing.T) {
	ps := []*config.Project{loadProject(t, "api")}
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Listen: "0"}, `listen "0"`},
		{Options{Listen: "65536"}, `listen "65536"`},
		{Options{Listen: "080"}, `listen "080"`},
		{Options{Listen: "localhost:80"}, `listen "localhost:80"`},
		{Options{Listen: "unix:/run/x.sock"}, `listen "unix:/run/x.sock"`},
		{Options{Listen: "[fe80::1%eth0]:80"}, "IPv6 zone"},
		{Options{Hosts: []string{"0.0.0.0"}}, "unspecified address"},
		{Options{Hosts: []string{"10.0.0.1", "10.0.0.1"}}, "given twice"},
		{Options{Hosts: []string{"fd00::1", "[fd00::1]"}}, "given twice"},
		{Options{Hosts: []string{"-a.example"}}, `host "-a.example"`},
		{Options{Hosts: []string{"10.0.0.1:3000"}}, `host "10.0.0.1:3000"`},
		{Options{ServerNames: []string{"a.example", "A.example"}}, "given twice"},
		{Options{ServerNames: []string{"a..example"}}, `server-name "a..example"`},
		{Options{ServerNames: []string{"~^regex$"}}, `server-name "~^regex$"`},
		{Options{PathPrefix: "apps"}, "must start with /"},
		{Options{PathPrefix: "//"}, "empty path segment"},
		{Options{PathPrefix: "/a//b"}, "empty path segment"},
		{Options{PathPrefix: "/a/../b"}, "path segment . or .."},
		{Options{PathPrefix: "/a%20b"}, "want path segments"},
	} {
		_, err := Nginx(ps, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want it to say %q", c.opts, err, c.want)
		}
	}
}

// Several projects share one server only under path prefixes; without
// them every server would answer for the same names.
func TestSeveralProjectsNeedAPathPrefix(t *testing.T) {
	ps := []*config.Project{loadProject(t, "api"), loadProject(t, "fk")}
	_, err := Nginx(ps, Options{ServerNames: []string{"example.com"}})
	if err == nil || !strings.Contains(err.Error(), "several projects need --path-prefix") || !strings.Contains(err.Error(), `"api fk"`) {
		t.Errorf("err = %v", err)
	}
	if _, err := Nginx(nil, Options{}); err == nil {
		t.Error("no projects: no error")
	}
	if _, err := Nginx([]*config.Project{ps[0], ps[0]}, Options{PathPrefix: "/"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a project twice: err = %v", err)
	}
}

// instances = "max" means one port per CPU of each host in fork mode,
// which a gateway for a fleet cannot know.
func TestForkMaxInAFleet(t *testing.T) {
	ps := []*config.Project{loadProject(t, "max")}
	if _, err := Nginx(ps, Options{Hosts: []string{"10.0.0.1"}}); err == nil || !strings.Contains(err.Error(), `instances = "max"`) {
		t.Errorf("err = %v", err)
	}
}

var (
	upstreamRE = regexp.MustCompile(`(?s)upstream (\S+) \{\n(.*?)\n\}`)
	serverRE   = regexp.MustCompile(`(?m)^    server (\S+)(.*);$`)
)

// nginxUpstreams returns every upstream's server lines: address and
// parameters.
func nginxUpstreams(t *testing.T, conf string) map[string][][2]string {
	t.Helper()
	out := map[string][][2]string{}
	for _, m := range upstreamRE.FindAllStringSubmatch(conf, -1) {
		for _, s := range serverRE.FindAllStringSubmatch(m[2], -1) {
			out[m[1]] = append(out[m[1]], [2]string{s[1], strings.TrimSpace(s[2])})
		}
		if !strings.Contains(m[2], "\n    keepalive ") {
			t.Errorf("upstream %s has no keepalive", m[1])
		}
	}
	return out
}

// The settings that make a reload drop nothing, checked on their own so
// that a regenerated golden file cannot hide their loss.
func TestNginxReloadSettings(t *testing.T) {
	fk := []*config.Project{loadProject(t, "fk")}
	api := []*config.Project{loadProject(t, "api")}
	render := func(ps []*config.Project, o Options) string {
		t.Helper()
		out, err := Nginx(ps, o)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	common := []string{
		"proxy_http_version 1.1;", `proxy_set_header Connection "";`, "proxy_set_header Host $host;",
		"proxy_set_header X-Real-IP $remote_addr;", "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
		"proxy_set_header X-Forwarded-Proto $scheme;", "keepalive_timeout 4s;",
	}
	retry := []string{"proxy_next_upstream error timeout;", "proxy_next_upstream_tries 0;", "proxy_connect_timeout 2s;"}

	// Cluster mode on one host: one server line, for the port.
	conf := render(api, Options{})
	if got := nginxUpstreams(t, conf)["bm2_api"]; len(got) != 1 || got[0][0] != "127.0.0.1:3000" || got[0][1] != "" {
		t.Errorf("cluster upstream: %v", got)
	}
	for _, s := range common {
		if !strings.Contains(conf, s) {
			t.Errorf("cluster: no %s", s)
		}
	}

	// Fork mode on one host: a line per instance, none ever marked down,
	// and retries on the next.
	conf = render(fk, Options{})
	got := nginxUpstreams(t, conf)["bm2_fk"]
	if len(got) != 3 {
		t.Fatalf("fork upstream: %v", got)
	}
	for i, s := range got {
		if want := "127.0.0.1:" + []string{"4000", "4001", "4002"}[i]; s[0] != want || s[1] != "max_fails=0" {
			t.Errorf("fork server %d: %v, want %s max_fails=0", i, s, want)
		}
	}
	for _, s := range append(common, retry...) {
		if !strings.Contains(conf, s) {
			t.Errorf("fork: no %s", s)
		}
	}

	// Several hosts: every server line twice, marked down after failures,
	// and as a backup that never is.
	for _, ps := range [][]*config.Project{fk, api} {
		conf = render(ps, Options{Hosts: []string{"10.0.0.1", "10.0.0.2"}})
		got := nginxUpstreams(t, conf)["bm2_"+ps[0].Name]
		n := len(got) / 2
		if len(got)%2 != 0 || n < 2 {
			t.Fatalf("%s over 2 hosts: %v", ps[0].Name, got)
		}
		for i := 0; i < n; i++ {
			if got[i][1] != "max_fails=3 fail_timeout=2s" || got[n+i][0] != got[i][0] || got[n+i][1] != "backup max_fails=0" {
				t.Errorf("%s over 2 hosts: server %v has backup %v", ps[0].Name, got[i], got[n+i])
			}
		}
		if !strings.HasPrefix(got[0][0], "10.0.0.1:") || !strings.HasPrefix(got[n-1][0], "10.0.0.2:") {
			t.Errorf("hosts in the wrong order: %v", got)
		}
		for _, s := range append(common, retry...) {
			if !strings.Contains(conf, s) {
				t.Errorf("%s over 2 hosts: no %s", ps[0].Name, s)
			}
		}
	}
}

func TestCaddyReloadSettings(t *testing.T) {
	out, err := Caddy([]*config.Project{loadProject(t, "fk")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	conf := string(out)
	for _, s := range []string{"to 127.0.0.1:4000\n", "to 127.0.0.1:4001\n", "to 127.0.0.1:4002\n",
		"lb_policy round_robin", "lb_try_duration 5s", "lb_try_interval 100ms", "dial_timeout 2s", "keepalive 4s"} {
		if !strings.Contains(conf, s) {
			t.Errorf("fork: no %q", s)
		}
	}
	if strings.Contains(conf, "fail_duration") {
		t.Errorf("fork on one host marks upstreams down:\n%s", conf)
	}
	out, err = Caddy([]*config.Project{loadProject(t, "fk")}, Options{Hosts: []string{"10.0.0.1", "10.0.0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	conf = string(out)
	if !strings.Contains(conf, "fail_duration 2s") || !strings.Contains(conf, "to 10.0.0.2:4002\n") {
		t.Errorf("fleet:\n%s", conf)
	}
}
