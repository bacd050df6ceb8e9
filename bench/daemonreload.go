package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// The daemon-reload figure's two variants: the same units, once produced
// by bm2's generator from project files in /etc/bm2, once as static unit
// files in /etc/systemd/system with the generator out of the way.
const (
	DRGenerator = "bm2 (generator)"
	DRStatic    = "hand-written units"
	// bm2-generator run by hand on the same project files, into a scratch
	// directory on the sandbox's /tmp (a tmpfs, like /run): its own cost.
	DRGenAlone = "bm2-generator alone"
)

// DRRun is one timed `systemctl daemon-reload`.
type DRRun struct {
	Projects  int     `json:"projects"`
	Instances int     `json:"instances_each"`
	Variant   string  `json:"variant"`
	Rep       int     `json:"rep"`
	Ms        float64 `json:"ms"`
}

// DRCheck is what systemd had loaded before a variant's timed reloads.
type DRCheck struct {
	Projects  int    `json:"projects"`
	Variant   string `json:"variant"`
	Targets   int    `json:"targets_loaded"`   // bm2-drNNNN.target
	Instances int    `json:"instances_loaded"` // bm2@drNNNN-i.service
	Units     int    `json:"units_loaded"`     // every bm2* unit of those projects (slices, probes, failure hooks too)
	GenFiles  int    `json:"generator_files"`  // bm2 files in /run/systemd/generator
	Gens      int    `json:"bm2_generators"`   // bm2-generator in systemd's generator directories
	Sample    string `json:"sample"`           // systemctl show of the first target and the last instance
}

// DaemonReloadResults is the daemon-reload figure.
type DaemonReloadResults struct {
	Runs   []DRRun   `json:"runs,omitempty"`
	Checks []DRCheck `json:"checks,omitempty"`
}

const (
	drGenerator = "/usr/lib/systemd/system-generators/bm2-generator"
	drAside     = "/root/bm2-generator.aside"
	drStaging   = "/root/bench-dr-units"
	drBasePort  = 20000
)

// drName is the name of generated project i.
func drName(i int) string { return fmt.Sprintf("dr%04d", i) }

// drRegister writes n project files into /etc/bm2, as `bm2 serve` would
// register them (cluster mode, distinct ports, a script that exists).
func drRegister(n, inst int) string {
	return fmt.Sprintf(`set -e
rm -f /etc/bm2/dr[0-9]*.toml
for i in $(seq 0 %d); do
	printf -v name 'dr%%04d' "$i"
	printf 'name = "%%s"\nscript = "app.js"\ncwd = "/srv/bench"\nruntime = "node"\nexec_mode = "cluster"\ninstances = %d\nport = %%d\n' "$name" $((%d + i)) > /etc/bm2/$name.toml
done`, n-1, inst, drBasePort)
}

// drTime runs daemon-reload once untimed, then k times timed (µs, one
// "DR <µs>" line each).
func drTime(k int) string {
	return fmt.Sprintf(`set -e
systemctl daemon-reload
for k in $(seq %d); do
	sleep 0.3
	s=$(date +%%s%%N)
	systemctl daemon-reload
	e=$(date +%%s%%N)
	echo "DR $(( (e - s) / 1000 ))"
done`, k)
}

// drGenAlone times bm2-generator k times on /etc/bm2 into a fresh scratch
// directory (µs, one "GEN <µs>" line each), after one untimed run.
func drGenAlone(k int) string {
	return fmt.Sprintf(`set -e
o=/tmp/bench-dr-gen
rm -rf $o; mkdir $o; %[1]s $o 2>/dev/null
for k in $(seq %[2]d); do
	rm -rf $o; mkdir $o
	s=$(date +%%s%%N)
	%[1]s $o 2>/dev/null
	e=$(date +%%s%%N)
	echo "GEN $(( (e - s) / 1000 ))"
done
echo "files=$(find $o \( -type f -o -type l \) | wc -l)"
rm -rf $o`, drGenerator, k)
}

// drCheckScript reports what systemd loaded (see DRCheck).
func drCheckScript(n int) string {
	return fmt.Sprintf(`loaded() { systemctl list-units --all --state=loaded --no-legend --plain "$@" | wc -l; }
echo "targets=$(loaded 'bm2-dr[0-9]*.target')"
echo "instances=$(loaded 'bm2@dr[0-9]*.service')"
echo "units=$(loaded 'bm2*dr[0-9]*')"
echo "genfiles=$(find /run/systemd/generator -name 'bm2*' | wc -l)"
echo "gens=$(ls /etc/systemd/system-generators /run/systemd/system-generators /usr/local/lib/systemd/system-generators /usr/lib/systemd/system-generators /lib/systemd/system-generators 2>/dev/null | grep -c '^bm2')"
echo ---
systemctl show -p Id,LoadState,FragmentPath bm2-%s.target
echo
systemctl show -p Id,LoadState,FragmentPath,DropInPaths bm2@%s-1.service`, drName(0), drName(n-1))
}

// drToStatic copies the generator's units of the dr projects into
// /etc/systemd/system (links that pointed into /run/systemd/generator now
// point at the copies), removes the project files and moves bm2-generator
// out of systemd's generator directories.
const drToStatic = `set -e
st=` + drStaging + `
rm -rf "$st"
mkdir -p "$st/multi-user.target.wants"
cd /run/systemd/generator
cp -a bm2-dr[0-9]*.slice bm2-dr[0-9]*.target bm2@dr[0-9]*.service.d "$st/"
cp -a multi-user.target.wants/bm2-dr[0-9]*.target "$st/multi-user.target.wants/"
for l in "$st"/multi-user.target.wants/*; do
	t=$(readlink "$l")
	case $t in /run/systemd/generator/*) ln -sfn "/etc/systemd/system/${t#/run/systemd/generator/}" "$l" ;; esac
done
want=$(find . -path '*dr[0-9]*' \( -type f -o -type l \) | wc -l)
got=$(find "$st" \( -type f -o -type l \) | wc -l)
if [ "$want" != "$got" ]; then echo "copied $got files of $want" >&2; exit 1; fi
if grep -rl /run/systemd/generator "$st" >&2; then echo "these name /run/systemd/generator" >&2; exit 1; fi
rm -f /etc/bm2/dr[0-9]*.toml
mv ` + drGenerator + ` ` + drAside + `
cp -a "$st/." /etc/systemd/system/
echo "files=$got"`

// drRestore undoes drToStatic and drRegister and reloads systemd.
const drRestore = `rm -rf /etc/systemd/system/bm2-dr[0-9]* /etc/systemd/system/bm2@dr[0-9]*.service.d /etc/systemd/system/multi-user.target.wants/bm2-dr[0-9]* ` + drStaging + `
rm -f /etc/bm2/dr[0-9]*.toml
if [ -e ` + drAside + ` ]; then mv ` + drAside + ` ` + drGenerator + `; fi
systemctl daemon-reload`

// drClean deletes every project registered before (so that both variants
// see the same systemd, and none of it runs).
const drClean = `for f in /etc/bm2/*.toml; do [ -e "$f" ] || continue; bm2 delete "$(basename "$f" .toml)" >/dev/null || exit 1; done
systemctl daemon-reload`

// daemonReload times `systemctl daemon-reload` in the bm2 sandbox with N
// registered projects (not started) against the same units written by
// hand, with bm2's generator disabled.
func (r *runner) daemonReload(ctx context.Context) error {
	s := r.s
	b := r.bm2
	r.record("daemonreload",
		"# before (not timed): bm2 delete every registered project; systemctl daemon-reload",
		fmt.Sprintf("# N project files, written like bm2 serve registers them (not started): for i in 0..N-1, /etc/bm2/dr<i>.toml =\n"+
			"#   name = \"dr0042\"  script = \"app.js\"  cwd = \"/srv/bench\"  runtime = \"node\"  exec_mode = \"cluster\"  instances = %d  port = %d", s.DRInstances, drBasePort+42),
		"# each variant: systemctl daemon-reload once (not timed), the check below, then "+strconv.Itoa(s.DRReps)+" times:",
		"sleep 0.3; s=$(date +%s%N); systemctl daemon-reload; e=$(date +%s%N)",
		"# check (both variants): units systemd has loaded, where from, and whether bm2-generator is in place",
		"systemctl list-units --all --state=loaded --no-legend --plain 'bm2-dr[0-9]*.target' 'bm2@dr[0-9]*.service' | wc -l",
		"systemctl show -p LoadState,FragmentPath bm2-dr0000.target; systemctl show -p LoadState,FragmentPath,DropInPaths bm2@dr<N-1>-1.service",
		"# bm2 variant, afterwards: the generator alone, "+strconv.Itoa(s.DRReps)+" times after one untimed run (same project files, a scratch dir on the sandbox's tmpfs /tmp):",
		"rm -rf /tmp/bench-dr-gen; mkdir /tmp/bench-dr-gen; s=$(date +%s%N); "+drGenerator+" /tmp/bench-dr-gen; e=$(date +%s%N)",
		"# hand-written: copy what the generator wrote for these projects into /etc/systemd/system (links re-pointed there), then",
		"rm /etc/bm2/dr*.toml; mv "+drGenerator+" "+drAside,
		"# after: remove the copies, put the generator back, systemctl daemon-reload")
	if out, err := b.sh(ctx, drClean); err != nil {
		return fmt.Errorf("delete the projects registered before: %w\n%s", err, out)
	}
	defer b.sh(context.WithoutCancel(ctx), drRestore)
	for _, n := range s.DRSizes {
		if out, err := b.sh(ctx, drRegister(n, s.DRInstances)); err != nil {
			return fmt.Errorf("register %d projects: %w\n%s", n, err, out)
		}
		for _, v := range []string{DRGenerator, DRStatic} {
			if v == DRStatic {
				if out, err := b.sh(ctx, drToStatic); err != nil {
					return fmt.Errorf("hand-written units: %w\n%s", err, out)
				}
			}
			// The untimed reload that loads the new units, then the check.
			if out, err := b.sh(ctx, "systemctl daemon-reload"); err != nil {
				return fmt.Errorf("daemon-reload: %w\n%s", err, out)
			}
			chk, err := r.drCheck(ctx, n, v)
			if err != nil {
				return err
			}
			r.res.DaemonReload.Checks = append(r.res.DaemonReload.Checks, chk)
			if err := r.drTimed(ctx, n, v, drTime(s.DRReps), "DR ", fmt.Sprintf("(%d units loaded)", chk.Units)); err != nil {
				return err
			}
			if v == DRGenerator {
				if err := r.drTimed(ctx, n, DRGenAlone, drGenAlone(s.DRReps), "GEN ", "into a scratch dir"); err != nil {
					return err
				}
			}
		}
		if out, err := b.sh(ctx, drRestore); err != nil {
			return fmt.Errorf("restore: %w\n%s", err, out)
		}
	}
	return nil
}

// drTimed runs a timing script whose lines prefix+<µs> are the samples and
// records them as runs of the variant.
func (r *runner) drTimed(ctx context.Context, n int, variant, script, prefix, note string) error {
	s := r.s
	out, err := r.bm2.sh(ctx, script)
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", variant, err, out)
	}
	var ms []float64
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "files=") {
			note += " (" + l + ")"
		}
		if f, ok := strings.CutPrefix(l, prefix); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return fmt.Errorf("%s: timing %q: %w", variant, l, err)
			}
			ms = append(ms, float64(us)/1000)
			r.res.DaemonReload.Runs = append(r.res.DaemonReload.Runs, DRRun{
				Projects: n, Instances: s.DRInstances, Variant: variant, Rep: len(ms) - 1, Ms: float64(us) / 1000})
		}
	}
	if len(ms) != s.DRReps {
		return fmt.Errorf("%s: %d timings, want %d:\n%s", variant, len(ms), s.DRReps, out)
	}
	lo, med := minMed(ms)
	r.logf("daemon-reload %4d projects × %d, %-20s min %6.1f ms  median %6.1f ms  %s", n, s.DRInstances, variant, lo, med, note)
	return nil
}

// drCheck makes sure systemd loaded every target and instance of the n
// projects, from where the variant puts them, and that bm2-generator is in
// place exactly when it should be.
func (r *runner) drCheck(ctx context.Context, n int, variant string) (DRCheck, error) {
	c := DRCheck{Projects: n, Variant: variant}
	out, err := r.bm2.sh(ctx, drCheckScript(n))
	if err != nil {
		return c, fmt.Errorf("check: %w\n%s", err, out)
	}
	counts, sample, _ := strings.Cut(out, "---\n")
	c.Sample = strings.TrimSpace(sample)
	for _, l := range strings.Split(counts, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(l), "=")
		x, _ := strconv.Atoi(v)
		switch k {
		case "targets":
			c.Targets = x
		case "instances":
			c.Instances = x
		case "units":
			c.Units = x
		case "genfiles":
			c.GenFiles = x
		case "gens":
			c.Gens = x
		}
	}
	dir := "/run/systemd/generator/"
	if variant == DRStatic {
		dir = "/etc/systemd/system/"
	}
	var problems []string
	if c.Targets != n || c.Instances != n*r.s.DRInstances {
		problems = append(problems, fmt.Sprintf("%d targets and %d instances loaded, want %d and %d", c.Targets, c.Instances, n, n*r.s.DRInstances))
	}
	for _, want := range []string{
		"FragmentPath=" + dir + "bm2-" + drName(0) + ".target",
		"DropInPaths=" + dir + "bm2@" + drName(n-1) + "-1.service.d/50-bm2.conf",
	} {
		if !strings.Contains(c.Sample, want) {
			problems = append(problems, "no "+want)
		}
	}
	if strings.Count(c.Sample, "LoadState=loaded") != 2 {
		problems = append(problems, "a sample unit is not loaded")
	}
	switch variant {
	case DRGenerator:
		if c.Gens == 0 || c.GenFiles == 0 {
			problems = append(problems, fmt.Sprintf("bm2-generator in %d generator directories, %d bm2 files in /run/systemd/generator", c.Gens, c.GenFiles))
		}
	case DRStatic:
		if c.Gens != 0 || c.GenFiles != 0 {
			problems = append(problems, fmt.Sprintf("generator not disabled: bm2-generator in %d generator directories, %d bm2 files in /run/systemd/generator", c.Gens, c.GenFiles))
		}
	}
	if len(problems) > 0 {
		return c, fmt.Errorf("%d projects, %s: %s\n%s", n, variant, strings.Join(problems, "; "), out)
	}
	return c, nil
}
