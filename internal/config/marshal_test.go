package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// roundTrip checks Parse(Marshal(p)) == p and that marshalling is stable.
// It returns the public file followed by the private part.
func roundTrip(t *testing.T, p *Project, numCPU int) []byte {
	t.Helper()
	pub, priv := Marshal(p)
	q, err := ParseSource(Source{Path: p.File, Data: pub, PrivatePath: PrivatePath(p.File), PrivateData: priv}, Options{NumCPU: numCPU})
	if err != nil {
		t.Fatalf("Parse(Marshal(p)) failed: %v\n%s\n---\n%s", err, pub, priv)
	}
	if !Equal(p, q) {
		t.Fatalf("round trip changed the project:\n got %+v\nwant %+v\n%s\n---\n%s", q, p, pub, priv)
	}
	if pub2, priv2 := Marshal(q); string(pub2) != string(pub) || string(priv2) != string(priv) {
		t.Fatalf("Marshal is not stable:\n%s\n---\n%s", pub, pub2)
	}
	return append(pub, priv...)
}

// The shared projects (the generator's golden inputs) and the valid edges
// (the edge of every rule, which generator's TestValidFixturesApply also
// runs through systemd-analyze verify) parse, and survive serve's rewrite
// unchanged.
func TestMarshalRoundTripFixtures(t *testing.T) {
	files, err := filepath.Glob("../../testdata/projects/*.toml")
	valid, _ := filepath.Glob("../../testdata/valid/*.toml")
	if err != nil || len(files) == 0 || len(valid) < 8 {
		t.Fatalf("no fixtures: %v", err)
	}
	files = append(files, valid...)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Parse("/etc/bm2/"+filepath.Base(f), data, Options{NumCPU: 2})
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, p, 2)
		})
	}
}

func TestMarshalAPI(t *testing.T) {
	data, err := os.ReadFile("../../testdata/projects/api.toml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("/etc/bm2/api.toml", data, Options{NumCPU: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := MarshalHeader + `name = "api"
script = "src/index.ts"
cwd = "/srv/api"
runtime = "bun"
runtime_path = "/usr/local/bin/bun"
instances = 4
port = 3000
exec_mode = "cluster"
user = "www-data"
`
	wantPrivate := PrivateHeader + `
[env]
NODE_ENV = "production"

[notify]
webhook = "http://127.0.0.1:9000/hook"
`
	pub, priv := Marshal(p)
	if string(pub) != want || string(priv) != wantPrivate {
		t.Fatalf("Marshal:\n%s\n---\n%s\nwant:\n%s\n---\n%s", pub, priv, want, wantPrivate)
	}
	// What other users may read carries no secret.
	for _, secret := range []string{"production", "9000"} {
		if strings.Contains(string(pub), secret) {
			t.Errorf("the public file holds %q", secret)
		}
	}
}

func TestMarshalMinimalAndMax(t *testing.T) {
	p, err := Parse("/etc/bm2/m.toml", []byte(`name = "m"
script = "a.js"
cwd = "/srv/m"
instances = "max"
port = 80
`), Options{NumCPU: 3})
	if err != nil {
		t.Fatal(err)
	}
	out := string(roundTrip(t, p, 3))
	if !strings.Contains(out, "instances = \"max\"\n") {
		t.Fatalf("instances = \"max\" lost:\n%s", out)
	}
	for _, absent := range []string{"user", "group", "restart_delay_ms", "restart_delay_max_ms", "max_restarts", "min_uptime_ms", "stop_timeout_ms", "[env]", "[notify]", "[resources]", "runtime_path"} {
		if strings.Contains(out, absent) {
			t.Errorf("default %s written:\n%s", absent, out)
		}
	}
}

func TestMarshalAwkwardStrings(t *testing.T) {
	p := &Project{
		Name: "odd", File: "/etc/bm2/odd.toml", Script: "a \"b\" \\c\td.js", Cwd: "/srv/ü nicode/100%",
		Runtime: Node, Instances: 2, Port: 10, Mode: Fork, Sandbox: Sandbox{Mode: Strict},
		RestartDelay: 0, MaxRestarts: 0, MinUptime: 0, StopTimeout: DefaultStopTimeout,
		Args: []string{"", "tab\there", "'single'"},
		Env: []EnvVar{
			{Name: "A", Value: "\"quoted\" \\ $HOME %i"},
			{Name: "B", Value: "\r\n\f\b x\x7fy \x01"},
		},
		Notify: Notify{Level: LevelInfo},
	}
	roundTrip(t, p, 1)
}

// FuzzMarshal: whatever Parse accepts survives Marshal and Parse unchanged.
func FuzzMarshal(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/projects/*.toml")
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(strings.Replace(string(data), `name = "`+Stem(p)+`"`, `name = "fuzz"`, 1))
	}
	f.Fuzz(func(t *testing.T, data string) {
		p, err := Parse("/etc/bm2/fuzz.toml", []byte(data), Options{NumCPU: 4})
		if err != nil {
			return
		}
		roundTrip(t, p, 4)
	})
}

// The log keys survive serve's rewrite, 0 (no limit) included, which is
// not the same as leaving a key out (journald's default): Marshal writes
// what was set and nothing else.
func TestMarshalLogKeys(t *testing.T) {
	base := "name = \"l\"\nscript = \"a.js\"\ncwd = \"/srv/l\"\nport = 3000\n"
	for _, c := range []struct {
		keys   string
		burst  string // "" for not set
		inter  string
		prefix bool
	}{
		{"", "", "", false},
		{"log_rate_limit_burst = 0\n", "0", "", false},
		{"log_rate_limit_interval_ms = 0\n", "", "0s", false},
		{"log_rate_limit_burst = 100\nlog_rate_limit_interval_ms = 1000\n", "100", "1s", false},
		{"log_level_prefix = true\n", "", "", true},
		{"log_level_prefix = false\n", "", "", false},
	} {
		p, err := Parse("/etc/bm2/l.toml", []byte(base+c.keys), Options{NumCPU: 1})
		if err != nil {
			t.Fatalf("%q: %v", c.keys, err)
		}
		burst, inter := "", ""
		if p.Log.RateLimitBurst != nil {
			burst = fmt.Sprint(*p.Log.RateLimitBurst)
		}
		if p.Log.RateLimitInterval != nil {
			inter = p.Log.RateLimitInterval.String()
		}
		if burst != c.burst || inter != c.inter || p.Log.LevelPrefix != c.prefix {
			t.Errorf("%q: burst %q, interval %q, prefix %v; want %q, %q, %v", c.keys, burst, inter, p.Log.LevelPrefix, c.burst, c.inter, c.prefix)
		}
		out := string(roundTrip(t, p, 1))
		want := strings.ReplaceAll(c.keys, "log_level_prefix = false\n", "")
		if got := logLines(out); got != want {
			t.Errorf("%q: Marshal wrote the log keys %q, want %q", c.keys, got, want)
		}
	}
}

// logLines is the log_* lines of a file, in order.
func logLines(file string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(file, "\n") {
		if strings.HasPrefix(l, "log_") {
			b.WriteString(l)
		}
	}
	return b.String()
}
