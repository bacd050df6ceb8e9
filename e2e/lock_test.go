package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// Concurrent `bm2 serve`s whose ports overlap, round after round: exactly
// one registers, every other is refused with the conflict message, and
// /etc/bm2 holds only the winner.
func TestConcurrentServe(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	names := []string{"ca", "cb", "cc"}
	for k, n := range names {
		b.app("/srv/"+n, "node-server.js", "server.js")
		// Ranges that overlap pairwise: ca 3500, cb 3500~3501, cc 3499~3500.
		port := map[int]int{0: 3500, 1: 3500, 2: 3499}[k]
		toml := fmt.Sprintf("name = %q\nscript = \"server.js\"\nruntime = \"node\"\nport = %d\n", n, port)
		if k > 0 {
			toml += "exec_mode = \"fork\"\ninstances = 2\n"
		}
		b.write("/srv/"+n+"/bm2.toml", toml)
	}
	for round := 0; round < 4; round++ {
		var script strings.Builder
		for _, n := range names {
			fmt.Fprintf(&script, "(cd /srv/%s && bm2 serve >/tmp/%s.out 2>&1; echo $? >/tmp/%s.rc) &\n", n, n, n)
		}
		script.WriteString("wait\n")
		b.sh(script.String())
		var won []string
		for _, n := range names {
			rc := strings.TrimSpace(b.sh("cat /tmp/" + n + ".rc"))
			out := b.sh("cat /tmp/" + n + ".out")
			switch rc {
			case "0":
				won = append(won, n)
			case "3":
				if !regexp.MustCompile(`port conflict: \w+ port range \S+ overlaps \w+ \S+`).MatchString(out) {
					t.Errorf("round %d: %s refused without the conflict message:\n%s", round, n, out)
				}
			default:
				t.Errorf("round %d: %s exited %s:\n%s", round, n, rc, out)
			}
		}
		files := strings.Fields(b.sh(`ls /etc/bm2 | grep '\.toml$' || true`))
		if len(won) != 1 || len(files) != 1 || files[0] != won[0]+".toml" {
			t.Fatalf("round %d: winners %v, /etc/bm2 holds %v", round, won, files)
		}
		b.must(0, "/", "delete", won[0])
	}
}
