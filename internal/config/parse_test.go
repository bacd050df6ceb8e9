package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Every file in ../../testdata/invalid is refused with exactly the errors its
// "## error: LINE: KEY: MESSAGE" lines name ("-" for no line), no more,
// no fewer: each rule of the parser has a file that proves it.
func TestInvalidFixtures(t *testing.T) {
	files, err := filepath.Glob("../../testdata/invalid/*.toml")
	if err != nil || len(files) < 10 {
		t.Fatalf("fixtures: %v %d", err, len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(string(data), "\n") {
				if rest, ok := strings.CutPrefix(line, "## error: "); ok {
					want = append(want, rest)
				}
			}
			if len(want) == 0 {
				t.Fatal("no ## error: lines")
			}
			file := "/etc/bm2/" + filepath.Base(f)
			_, err = Parse(file, data, Options{NumCPU: 2})
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("accepted, or not config.Errors: %v", err)
			}
			var got []string
			for _, e := range es {
				if e.File != file || e.Err == nil {
					t.Errorf("error without file or class: %#v", e)
				}
				line := "-"
				if e.Line > 0 {
					line = fmt.Sprint(e.Line)
				}
				got = append(got, fmt.Sprintf("%s: %s: %s", line, e.Key, e.Msg))
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestErrorClasses(t *testing.T) {
	_, err := Parse("/etc/bm2/types.toml", []byte("name = \"types\"\nport = \"1\"\ncolor = 1\n"), Options{})
	if !errors.Is(err, ErrType) || !errors.Is(err, ErrUnknownKey) || !errors.Is(err, ErrMissing) || errors.Is(err, ErrSyntax) {
		t.Fatalf("%v", err)
	}
	_, err = Parse("/etc/bm2/s.toml", []byte("name = \"s\nx"), Options{})
	if !errors.Is(err, ErrSyntax) {
		t.Fatalf("%v", err)
	}
}

// Accepted values reach the project as systemd takes them.
func TestAcceptedValues(t *testing.T) {
	p, err := Parse("/etc/bm2/ok.toml", []byte(`name = "ok"
script = "a.js"
cwd = "/srv/ok/"
port = 80
user = "4294967294"
group = "0"
env_file = "conf/.env"
[resources]
memory_max = "100%"
memory_high = "99.99%"
cpu_quota = "0.5%"
[sandbox]
writable = ["data", "/var/cache/ok", "."]
`), Options{NumCPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Cwd != "/srv/ok" || p.EnvFile != "/srv/ok/conf/.env" || p.User != "4294967294" || p.OwnAccount() {
		t.Fatalf("%+v", p)
	}
	if got := strings.Join(p.Sandbox.Writable, " "); got != "/srv/ok /srv/ok/data /var/cache/ok" || p.Sandbox.Mode != Strict {
		t.Fatalf("writable %q", got)
	}
	for _, s := range []string{"1", "512M", "1E", "infinity", "0.01%", "15%", "15E"} {
		if !validSize(s) {
			t.Errorf("%s refused", s)
		}
	}
	for _, s := range []string{"0", "0%", "0.00%", "100.01%", "1.234%", "16E", "18446744073709551616", "1k", "-1", " 1M"} {
		if validSize(s) {
			t.Errorf("%s accepted", s)
		}
	}
}

// Without user =, the project runs as its own account.
func TestOwnAccount(t *testing.T) {
	p, err := Parse("/etc/bm2/solo.toml", []byte("name = \"solo\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 1\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.OwnAccount() || p.Account() != "bm2-solo" {
		t.Fatalf("%q", p.Account())
	}
}

// A project dir's bm2.toml: cwd defaults to the dir, and the name need not
// match the file.
func TestParseProjectDir(t *testing.T) {
	p, err := Parse("/srv/app/bm2.toml", []byte("name = \"web\"\nscript = \"a.js\"\nport = 1\n"), Options{Cwd: "/srv/app", AnyName: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Cwd != "/srv/app" || p.Name != "web" {
		t.Fatalf("%+v", p)
	}
	_, err = Parse("/srv/app/bm2.toml", []byte("script = \"a.js\"\nport = 1\n"), Options{Cwd: "/srv/app", AnyName: true})
	if err == nil || !strings.Contains(err.Error(), "/srv/app/bm2.toml: name: required") {
		t.Fatalf("%v", err)
	}
}

// Limits keep every accepted value loadable.
func TestLengthLimits(t *testing.T) {
	long := strings.Repeat("x", maxPath)
	doc := fmt.Sprintf("name = \"l\"\nscript = \"a.js\"\ncwd = \"/%s\"\nport = 1\nargs = [%q]\n[env]\nBIG = %q\n",
		long, strings.Repeat("y", maxWord+1), strings.Repeat("z", maxEnvValue+1))
	_, err := Parse("/etc/bm2/l.toml", []byte(doc), Options{})
	for _, want := range []string{"cwd: is 4096 bytes long, more than 4095", "args[0]: is 32769 bytes long, more than 32768", "env.BIG: is 32769 bytes long, more than 32768"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

// The private part: [env] and the webhook, merged into the project; any
// other key there, or a key set in both files, is an error naming the
// private file and its line.
func TestPrivatePart(t *testing.T) {
	src := Source{
		Path:        "/etc/bm2/sec.toml",
		Data:        []byte("name = \"sec\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 1\n[env]\nA = \"public\"\n[notify]\nlevel = \"info\"\n"),
		PrivatePath: "/etc/bm2/private/sec.toml",
		PrivateData: []byte("[env]\nSECRET = \"s\"\n[notify]\nwebhook = \"https://u:p@h/x?t=1\"\n"),
	}
	p, err := ParseSource(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Env) != 2 || p.Env[1].Name != "SECRET" || p.Notify.Webhook != "https://u:p@h/x?t=1" || p.Notify.Level != LevelInfo || p.PrivateFile != src.PrivatePath {
		t.Fatalf("%+v", p)
	}
	src.PrivateData = []byte("port = 2\n[env]\nA = \"again\"\n")
	_, err = ParseSource(src, Options{})
	for _, want := range []string{
		"/etc/bm2/private/sec.toml:1: port: does not belong in the private part",
		"/etc/bm2/private/sec.toml:3: env.A: is set in /etc/bm2/sec.toml:6 too",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
	src.PrivateData, src.PrivateErr = nil, errors.New("holds secrets, so it must be owned by root")
	if _, err := ParseSource(src, Options{}); err == nil || !strings.Contains(err.Error(), "/etc/bm2/private/sec.toml: holds secrets") {
		t.Fatalf("%v", err)
	}
}

// Discover reads the private part only when it is root's and 0600, and a
// reader who may not look (a normal user) gets the project without it.
func TestDiscoverPrivate(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sec.toml"), []byte("name = \"sec\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 1\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "private"), 0o700)
	priv := filepath.Join(dir, "private", "sec.toml")
	os.WriteFile(priv, []byte("[env]\nSECRET = \"s\"\n"), 0o600)
	l := Load([]string{dir}, Options{})
	e, _ := l.Find("sec")
	// Not root: the temp dir and the file are ours, which user scope
	// accepts (a user's secrets are theirs); root: root's.
	if e.Err != nil || len(e.Project.Env) != 1 {
		t.Fatalf("%+v", e)
	}
	os.Chmod(priv, 0o644)
	if e, _ := Load([]string{dir}, Options{}).Find("sec"); e.Err == nil || !strings.Contains(e.Err.Error(), "alone, but it is -rw-r--r--") {
		t.Fatalf("world-readable private part accepted: %+v", e)
	}
	os.Chmod(priv, 0o600)
	if os.Geteuid() == 0 {
		os.Chown(priv, 65534, 65534)
		if e, _ := Load([]string{dir}, Options{}).Find("sec"); e.Err == nil {
			t.Fatal("private part owned by nobody accepted")
		}
	}
	os.Remove(priv)
	os.Symlink("/etc/shadow", priv)
	if e, _ := Load([]string{dir}, Options{}).Find("sec"); e.Err == nil || !strings.Contains(e.Err.Error(), "not a symbolic link") {
		t.Fatalf("symlinked private part accepted: %+v", e)
	}
}

// wants and requires keep the units in the order written; Needs lists
// wants first; Marshal writes them back as they were; an empty list is no
// list.
func TestNeeds(t *testing.T) {
	base := "name = \"db\"\nscript = \"a.js\"\ncwd = \"/srv/db\"\nport = 1\n"
	p, err := Parse("/etc/bm2/db.toml", []byte(base+`wants = ["postgresql.service", "network-online.target"]
requires = ["redis-server.service", "bm2-other.target"]
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Need{{"postgresql.service", "wants"}, {"network-online.target", "wants"},
		{"redis-server.service", "requires"}, {"bm2-other.target", "requires"}}
	if got := p.Needs(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Needs() = %v, want %v", got, want)
	}
	pub, _ := Marshal(p)
	for _, line := range []string{
		"wants = [\"postgresql.service\", \"network-online.target\"]\n",
		"requires = [\"redis-server.service\", \"bm2-other.target\"]\n",
	} {
		if !strings.Contains(string(pub), line) {
			t.Errorf("Marshal lacks %q:\n%s", line, pub)
		}
	}
	empty, err := Parse("/etc/bm2/db.toml", []byte(base+"wants = []\nrequires = []\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	none, _ := Parse("/etc/bm2/db.toml", []byte(base), Options{})
	if !Equal(empty, none) || len(empty.Needs()) != 0 {
		t.Fatalf("empty lists: %+v", empty)
	}
	if pub, _ := Marshal(empty); strings.Contains(string(pub), "wants") || strings.Contains(string(pub), "requires") {
		t.Fatalf("empty lists written:\n%s", pub)
	}
}

// notify.allow_local is a boolean, taken from root's files (and round
// trips through Marshal), and refused, with file, line and key, from a
// file root did not write (Options.Foreign).
func TestNotifyAllowLocal(t *testing.T) {
	file := "name = \"api\"\nscript = \"a.js\"\ncwd = \"/srv/api\"\nport = 1\n[notify]\nlevel = \"info\"\nallow_local = true\n"
	p, err := Parse("/etc/bm2/api.toml", []byte(file), Options{NumCPU: 1})
	if err != nil || !p.Notify.AllowLocal {
		t.Fatalf("root's file: %+v, %v", p, err)
	}
	pub, _ := Marshal(p)
	if !strings.Contains(string(pub), "[notify]\nlevel = \"info\"\nallow_local = true\n") {
		t.Errorf("Marshal lost allow_local:\n%s", pub)
	}
	if q, err := Parse("/etc/bm2/api.toml", pub, Options{NumCPU: 1}); err != nil || !Equal(p, q) {
		t.Errorf("round trip: %+v, %v", q, err)
	}
	_, err = Parse("/home/alice/app/bm2.toml", []byte(file), Options{NumCPU: 1, AnyName: true, Foreign: true})
	if err == nil || !strings.Contains(err.Error(), "/home/alice/app/bm2.toml:7: notify.allow_local: is honoured only in a file root wrote") {
		t.Errorf("a user's file: %v", err)
	}
	off := strings.Replace(file, "true", "false", 1)
	if p, err := Parse("/home/alice/app/bm2.toml", []byte(off), Options{NumCPU: 1, AnyName: true, Foreign: true}); err != nil || p.Notify.AllowLocal {
		t.Errorf("allow_local = false in a user's file: %+v, %v", p, err)
	}
	_, err = Parse("/etc/bm2/api.toml", []byte(strings.Replace(file, "true", `"yes"`, 1)), Options{NumCPU: 1})
	if err == nil || !strings.Contains(err.Error(), "/etc/bm2/api.toml:7: notify.allow_local: must be true or false, got a string") {
		t.Errorf("a string: %v", err)
	}
}

// A C1 control (U+009B is CSI, as ESC [ is) is a control character too.
func TestC1Refused(t *testing.T) {
	_, err := Parse("/etc/bm2/api.toml", []byte("name = \"api\"\nscript = \"a\\u009b2J.js\"\ncwd = \"/srv/api\"\nport = 1\n"), Options{NumCPU: 1})
	if err == nil || !strings.Contains(err.Error(), "/etc/bm2/api.toml:2: script: must not contain control characters") {
		t.Fatalf("%v", err)
	}
}

// reuseport: "app" unless the file says "preload"; Marshal writes only
// "preload", and only a cluster project preloads.
func TestReusePort(t *testing.T) {
	base := "name = \"web\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 3000\n"
	for _, c := range []struct {
		extra   string
		want    ReusePort
		preload bool
		line    string
	}{
		{"", ReusePortApp, false, ""},
		{"reuseport = \"app\"\n", ReusePortApp, false, ""},
		{"reuseport = \"preload\"\n", ReusePortPreload, true, "reuseport = \"preload\"\n"},
	} {
		p, err := Parse("/etc/bm2/web.toml", []byte(base+c.extra), Options{})
		if err != nil {
			t.Fatalf("%q: %v", c.extra, err)
		}
		if p.ReusePort != c.want || p.Preload() != c.preload {
			t.Errorf("%q: reuseport %q, Preload %v; want %q, %v", c.extra, p.ReusePort, p.Preload(), c.want, c.preload)
		}
		pub, _ := Marshal(p)
		if got := strings.Contains(string(pub), "reuseport"); got != (c.line != "") || c.line != "" && !strings.Contains(string(pub), "\nexec_mode = \"cluster\"\n"+c.line) {
			t.Errorf("%q: Marshal wrote:\n%s", c.extra, pub)
		}
		roundTrip(t, p, 2)
	}
	// A project made in code (bm2 import) without the field is "app".
	p, _ := Parse("/etc/bm2/web.toml", []byte(base), Options{})
	q := *p
	q.ReusePort = ""
	if !Equal(p, &q) {
		t.Error(`ReusePort "" is not the default "app"`)
	}
}

// KeyLines gives the line of every key a file sets, at the top, in a
// table (however many of its keys are asked), under dotted keys and in
// [env]: the lines are found again only when asked, after the values.
func TestKeyLines(t *testing.T) {
	data := "\ufeffname = \"api\"\n" + // 1
		"script = \"a.js\"\n" + // 2
		"sandbox.mode = \"compat\"\n" + // 3
		"port = 3000\n" + // 4
		"\n" + // 5
		"[resources]\n" + // 6
		"memory_max = \"1G\"\n" + // 7
		"# a comment\n" + // 8
		"cpu_quota = \"50%\"\n" + // 9
		"[env]\n" + // 10
		"NODE_ENV = \"production\"\n" + // 11
		"TOKEN = \"x\"\n" // 12
	got := KeyLines([]byte(data))
	want := map[string]int{"name": 1, "script": 2, "sandbox.mode": 3, "port": 4,
		"resources.memory_max": 7, "resources.cpu_quota": 9, "env.NODE_ENV": 11, "env.TOKEN": 12}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("KeyLines = %v, want %v", got, want)
	}
	if got := KeyLines([]byte("name = \"api\nport = 1\n")); got != nil {
		t.Errorf("a file that does not decode: KeyLines = %v, want nil", got)
	}
}
