package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// generator times bin/bm2-generator on the host (no sandbox) in a private
// mount namespace: project files and output on a fresh tmpfs, /dev/kmsg
// bound to /dev/null (see helperGenbench).
func (r *runner) generator(ctx context.Context) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var sizes []string
	for _, n := range r.s.GenSizes {
		sizes = append(sizes, strconv.Itoa(n))
	}
	gen := filepath.Join(r.snap, "bm2-generator")
	args := []string{"--mount", "--propagation", "private", self, helperArg, "genbench",
		"-gen", gen, "-sizes", strings.Join(sizes, ","), "-reps", strconv.Itoa(r.s.GenReps)}
	r.record("generator",
		"unshare --mount --propagation private bench-helper _helper genbench -gen bin/bm2-generator -sizes "+strings.Join(sizes, ",")+" -reps "+strconv.Itoa(r.s.GenReps),
		"# in there: mount -t tmpfs (project files, output, a copy of the generator); mount --bind /dev/null /dev/kmsg",
		"# N files like: name = \"p0042\"  script = \"app.js\"  cwd = \"/srv/p0042\"  runtime = \"node\"  instances = 4  port = 10042  [env] NODE_ENV = \"production\"",
		"# each run: rm -rf OUT; mkdir OUT; env -i PATH=... BM2_CONFIG_PATH=<dir of N files> bm2-generator OUT   # wall time around fork+exec+wait4, max RSS from wait4's rusage",
		"# one unmeasured run per size first; sizes in ascending, then descending order, alternately")
	r.logf("generator: %d runs per size of %s projects", r.s.GenReps, strings.Join(sizes, ", "))
	cmd := exec.CommandContext(ctx, "unshare", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return err
	}
	var runs []GenRun
	if err := json.Unmarshal(out, &runs); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	r.res.Generator = runs
	for _, n := range r.s.GenSizes {
		wall, rss, files := genSamples(runs, n)
		wmin, wmed := minMed(wall)
		_, rmed := minMed(rss)
		r.logf("generator %4d projects (%5d files): min %7.2f ms  median %7.2f ms  max RSS %5.1f MiB",
			n, files, wmin, wmed, rmed/1024)
	}
	return nil
}

// genSamples picks the timed runs for n projects: wall times (ms), max RSS
// (KiB) and the file count the untimed warm-up run reported.
func genSamples(runs []GenRun, n int) (wall, rss []float64, files int) {
	for _, g := range runs {
		if g.Projects != n {
			continue
		}
		if g.Rep < 0 {
			files = g.Files
			continue
		}
		wall = append(wall, g.WallMs)
		rss = append(rss, float64(g.MaxRSS))
	}
	return wall, rss, files
}
