package guess

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseStart(t *testing.T) {
	for _, c := range []struct {
		in, runner, script string
		env                string
	}{
		{"node server.js", "node", "server.js", ""},
		{"NODE_ENV=production PORT=4000 node ./dist/main.js", "node", "dist/main.js", "NODE_ENV=production PORT=4000"},
		{"cross-env NODE_ENV=production node -r dotenv/config --enable-source-maps server.js", "node", "server.js", "NODE_ENV=production"},
		{"npm run build && node dist/index.js", "node", "dist/index.js", ""},
		{"bun run src/index.ts", "bun", "src/index.ts", ""},
		{"bun --preload ./setup.ts index.ts", "bun", "index.ts", ""},
		{"./node_modules/.bin/tsx watch src/app.ts", "tsx", "src/app.ts", ""},
		{"node -e \"require('./x')\"", "", "", ""},
		{"next start", "", "", ""},
		{"node ../outside.js", "", "", ""},
		{"", "", "", ""},
	} {
		got, ok := parseStart(c.in)
		var env []string
		for _, kv := range got.env {
			env = append(env, kv[0]+"="+kv[1])
		}
		if ok != (c.runner != "") || got.runner != c.runner || got.script != c.script || strings.Join(env, " ") != c.env {
			t.Errorf("parseStart(%q) = %+v, %v; want %s %s [%s]", c.in, got, ok, c.runner, c.script, c.env)
		}
	}
}

func TestInitName(t *testing.T) {
	for in, want := range map[string]string{
		"shop":                  "shop",
		"@acme/Shop API":        "shop-api",
		"My_App.v2":             "my_app-v2",
		"--x--":                 "x",
		"日本":                    "",
		strings.Repeat("a", 70): strings.Repeat("a", 64),
	} {
		if got := initName(in); got != want {
			t.Errorf("initName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScriptName(t *testing.T) {
	for in, want := range map[string]string{"/a/server.js": "server", "/a/My App.ts": "my-app", "/a/_x.mjs": "x", "/a/.js": "app", "/a/api.v2.cjs": "api-v2"} {
		if got := ScriptName(in); got != want {
			t.Errorf("ScriptName(%q) = %q, want %q", in, got, want)
		}
	}
}

// ScriptPort is init's scanner on the script alone: PORT's default, not
// another variable's.
func TestScriptPort(t *testing.T) {
	dir := t.TempDir()
	for src, want := range map[string]string{
		"const port = process.env.PORT || 3000;\n":      "3000 process.env.PORT || 3000",
		"const port = process.env.PORT ?? '8080';\n":    "8080 process.env.PORT ?? 8080",
		"const port = process.env.NODE_PORT || 3000;\n": "0 ",
		"app.listen(3000);\n":                           "0 ",
	} {
		f := filepath.Join(dir, "app.js")
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		n, how := ScriptPort(f)
		if got := strings.TrimSpace(strconv.Itoa(n) + " " + how); got != strings.TrimSpace(want) {
			t.Errorf("ScriptPort(%q) = %q, want %q", src, got, want)
		}
	}
	if n, _ := ScriptPort(filepath.Join(dir, "none.js")); n != 0 {
		t.Errorf("ScriptPort(missing) = %d", n)
	}
}
