package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestInitServes: the bm2.toml bm2 init writes is one bm2 check and bm2
// serve take as it is. An Express 5 app written for PM2 (Node.js, its port
// from process.env.PORT || 3000, no reusePort) and a Bun app that calls
// Bun.serve without reusePort each get cluster mode with the preload, and
// with instances = 2 both instances of each are confirmed and answer.
func TestInitServes(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	mods := b.frameworks()
	b.app("/srv/web", "pm2-express.js", "web.js")
	b.sh(fmt.Sprintf(`ln -s %s /srv/web/node_modules`, mods))
	b.write("/srv/web/package.json", `{"name": "web", "main": "web.js", "scripts": {"start": "node web.js"}, "dependencies": {"express": "^5"}}`)
	b.write("/srv/hello/package.json", `{"name": "hello", "module": "index.ts", "type": "module"}`)
	b.write("/srv/hello/bun.lock", "{}\n")
	b.write("/srv/hello/index.ts", "Bun.serve({ port: Number(process.env.PORT) || 3600, fetch: () => new Response(`bun ${process.pid}\\n`) });\n")

	for _, c := range []struct {
		dir, name, summary string
		port               int
		lines              []string
	}{
		{"/srv/web", "web", `project "web", 1 x cluster on port 3000, runtime node`, 3000, []string{
			"  runtime = \"node\"           # from scripts.start, which runs node\n",
			"  port = 3000                # from web.js: `process.env.PORT || 3000`\n",
			"  port_env = [\"PORT\"]",
			"  reuseport = \"preload\"      # web.js: .listen() without reusePort; bm2 adds it, no code change\n",
		}},
		{"/srv/hello", "hello", `project "hello", 1 x cluster on port 3600, runtime bun`, 3600, []string{
			"  runtime = \"bun\"            # from the bun.lock file here\n",
			"  port = 3600                # from index.ts: `process.env.PORT || 3600`\n",
			"  reuseport = \"preload\"      # index.ts: Bun.serve() without reusePort; bm2 adds it, no code change\n",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := b.in(t)
			r := b.must(0, c.dir, "init")
			t.Logf("bm2 init:\n%s", r.stdout)
			for _, want := range append([]string{"wrote " + c.dir + "/bm2.toml: " + c.summary + "\n", "\nnext: `bm2 check` checks it"}, c.lines...) {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("bm2 init's output lacks %q:\n%s", want, r.stdout)
				}
			}
			b.must(1, c.dir, "init") // there already
			b.sh(`sed -i 's/^# instances = 1 .*/instances = 2/' ` + c.dir + `/bm2.toml`)
			b.must(0, c.dir, "check")
			r = b.must(0, c.dir, "serve")
			for _, want := range []string{c.name + "-0 confirmed (reusePort)\n", c.name + "-1 confirmed (reusePort)\n"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("serve's output lacks %q:\n%s", want, r.stdout)
				}
			}
			b.answeredBy(c.port, b.pids(c.name, 2))
		})
	}
}
