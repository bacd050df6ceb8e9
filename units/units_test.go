package units

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"api": "api", "my-api": `my\x2dapi`, "a_b.c": "a_b.c", ".x": `\x2ex`, "a/b": "a-b", "sp ace": `sp\x20ace`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	if Slice("my-api") != `bm2-my\x2dapi.slice` || Target("my-api") != "bm2-my-api.target" ||
		Instance("my-api", 3) != "bm2@my-api-3.service" || Probe("api", 0) != "bm2-probe@api-0.service" ||
		Instance("api", Surge) != "bm2@api-surge.service" || Probe("api", Surge) != "bm2-probe@api-surge.service" ||
		Steer("my-api", 1) != "bm2-steer@my-api-1.service" || Steer("api", Surge) != "bm2-steer@api-surge.service" {
		t.Error("unit names")
	}
}

func TestParseInstance(t *testing.T) {
	for _, c := range []struct {
		in      string
		project string
		index   int
		ok      bool
	}{
		{"api-0", "api", 0, true},
		{"bm2@my-api-12.service", "my-api", 12, true},
		{"bm2@api-1-0", "api-1", 0, true},
		{"api", "", 0, false},
		{"api-", "", 0, false},
		{"-1", "", 0, false},
		{"api-01", "", 0, false},
		{"api-x", "", 0, false},
		{"api-surge", "api", Surge, true},
		{"bm2@my-api-surge.service", "my-api", Surge, true},
		{"api-surge-0", "api-surge", 0, true},
		{"surge", "", 0, false},
	} {
		p, i, ok := ParseInstance(c.in)
		if p != c.project || i != c.index || ok != c.ok {
			t.Errorf("ParseInstance(%q) = %q %d %v", c.in, p, i, ok)
		}
	}
}

func TestQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "plain",
		"two words":  `"two words"`,
		"$HOME":      "$$HOME",
		"100%":       "100%%",
		`back\slash`: `"back\\slash"`,
		`say "hi"`:   `"say \"hi\""`,
		"":           `""`,
		";":          `";"`,
		"tab\there":  `"tab\there"`,
		"it's":       `"it's"`,
	} {
		if got := QuoteArg(in); got != want {
			t.Errorf("QuoteArg(%q) = %s, want %s", in, got, want)
		}
	}
	if got := QuoteEnv("A", "x\ny %"); got != `"A=x\ny %%"` {
		t.Errorf("QuoteEnv = %s", got)
	}
}

func TestFileRendering(t *testing.T) {
	var f File
	f.Comment("hello")
	f.Add("Unit", "Description", "d")
	f.Add("Service", "ExecStart", "x")
	f.Add("Unit", "After", "y")
	want := "# hello\n\n[Unit]\nDescription=d\nAfter=y\n\n[Service]\nExecStart=x\n"
	if got := string(f.Bytes()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, name := range []string{"bm2@.service", "bm2-probe@.service", "bm2.slice"} {
		data, err := StaticFile(name)
		if err != nil || !strings.Contains(string(data), "[Unit]") {
			t.Errorf("static %s: %v", name, err)
		}
	}
}

func TestAccountAndLongestName(t *testing.T) {
	if a := Account("api"); a != "bm2-api" {
		t.Fatal(a)
	}
	long := strings.Repeat("a", 40)
	a, b := Account(long), Account(long[:39]+"b")
	if len(a) != 31 || a == b || !strings.HasPrefix(a, "bm2-"+long[:18]+"-") {
		t.Fatalf("%q %q", a, b)
	}
	if n := LongestName("api", 4); n != len(".#bm2@api-surge.service.d") {
		t.Fatal(n)
	}
	if n := LongestName("a-b-c-d-e-f", 1); n != len(`.#bm2-a\x2db\x2dc\x2dd\x2de\x2df.slice`) {
		t.Fatal(n)
	}
	// The restart schedule's units: as long as the surge's drop-in
	// directory at most, so they never make a name too long that was not
	// already.
	if RestartTimer("my-api") != "bm2-my-api-restart.timer" || RestartService("my-api") != "bm2-my-api-restart.service" {
		t.Fatal(RestartTimer("my-api"), RestartService("my-api"))
	}
	longest := strings.Repeat("n", 64)
	if n := LongestName(longest, 1); n != len(TempPrefix+DropInDir(longest, Surge)) || n != len(TempPrefix+RestartService(longest)) || n > NameMax {
		t.Fatal(n)
	}
	// The health check's: shorter still.
	if HealthTimer("my-api") != "bm2-my-api-health.timer" || HealthService("my-api") != "bm2-my-api-health.service" {
		t.Fatal(HealthTimer("my-api"), HealthService("my-api"))
	}
	if len(HealthService(longest)) >= len(RestartService(longest)) {
		t.Fatal("the health check's service is no longer shorter than the restart schedule's")
	}
	if p, i, ok := ParseProbe("bm2-probe@my-api-2.service"); !ok || p != "my-api" || i != 2 {
		t.Fatal(p, i, ok)
	}
	if _, _, ok := ParseProbe("bm2@api-2.service"); ok {
		t.Fatal("instance parsed as probe")
	}
}

func TestQuoteEnvFile(t *testing.T) {
	got := QuoteEnvFile("A", "say \"hi\" $HOME `x` \\n\nline2 100%")
	want := "A=\"say \\\"hi\\\" \\$HOME \\`x\\` \\\\n\nline2 100%\"\n"
	if got != want {
		t.Fatalf("%q\nwant %q", got, want)
	}
}
