package config

import (
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
	for _, absent := range []string{"user", "group", "restart_delay_ms", "max_restarts", "min_uptime_ms", "stop_timeout_ms", "[env]", "[notify]", "[resources]", "runtime_path"} {
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
