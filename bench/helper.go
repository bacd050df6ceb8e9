package main

// The helper: small measuring tools the driver runs inside a sandbox (it
// copies its own executable there as /usr/local/bin/bench-helper) or, for
// the generator, in a private mount namespace on the host. Running them
// next to what they measure avoids timing nsenter and shell start-ups.
//
//	bench-helper _helper start -url URL -confirm KIND -timeout D -- CMD...
//	bench-helper _helper crash -pid PID -old PID,PID -url URL -timeout D
//	bench-helper _helper procs
//	bench-helper _helper spread -addr HOST:PORT -n N
//	bench-helper _helper genbench -gen EXE -sizes 1,10 -reps N
//
// Every subcommand prints one JSON object on stdout. Its name is chosen
// not to start with "bm2": the memory figure counts processes named bm2*.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const helperArg = "_helper"

// helperMain runs a helper subcommand and exits.
func helperMain(args []string) {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "bench-helper: no subcommand")
		os.Exit(2)
	}
	var v any
	var err error
	switch args[0] {
	case "start":
		v, err = helperStart(args[1:])
	case "crash":
		v, err = helperCrash(args[1:])
	case "procs":
		v, err = readProcs()
	case "spread":
		v, err = helperSpread(args[1:])
	case "genbench":
		v, err = helperGenbench(args[1:])
	default:
		err = fmt.Errorf("unknown subcommand %q", args[0])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-helper %s: %v\n", args[0], err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		os.Exit(1)
	}
}

// monoUs is CLOCK_MONOTONIC in microseconds: the clock systemd's
// *TimestampMonotonic properties use (the sandbox has no time namespace).
func monoUs() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano() / 1000
}

// get makes one request on a fresh connection and returns the status and
// body.
func get(client *http.Client, url string) (int, string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b), err
}

// bodyPID reads the pid out of the app's "hello world from PID" answer.
func bodyPID(body string) int {
	f := strings.Fields(body)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[len(f)-1])
	return n
}

// StartResult is what `start` measures, in microseconds from just before
// the command is started.
type StartResult struct {
	ReturnUs  int64  `json:"return_us"`  // the command returned
	ConfirmUs int64  `json:"confirm_us"` // bm2: last reuseport_confirmed; pm2: start of the first jlist showing all online
	OnlineUs  int64  `json:"online_us"`  // bm2 and units: last instance active in systemd (0 for pm2)
	PortUs    int64  `json:"port_us"`    // first HTTP 200 on the port
	Exit      int    `json:"exit"`
	Output    string `json:"output"`
}

// helperStart runs a command that starts N instances and measures when it
// returns, when the manager confirms them and when the port first answers
// (polled every 5 ms on fresh connections, from the moment the command
// starts).
//
// -confirm is bm2:PROJECT:N (N reuseport_confirmed events newer than the
// start, read from the journal; their own timestamps count), pm2:NAME:N
// (`pm2 jlist` shows N processes of NAME online; the start of that call
// counts) or units:PREFIX:N (hand-written units PREFIX-0 … PREFIX-N-1:
// nothing to confirm, only when the last became active).
func helperStart(args []string) (*StartResult, error) {
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	url := fs.String("url", "", "URL to poll")
	confirm := fs.String("confirm", "", "bm2:PROJECT:N, pm2:NAME:N or units:PREFIX:N")
	timeout := fs.Duration("timeout", 90*time.Second, "give up after")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cmdArgs := fs.Args()
	if len(cmdArgs) == 0 || *url == "" || *confirm == "" {
		return nil, errors.New("need -url, -confirm and a command")
	}
	kind, rest, _ := strings.Cut(*confirm, ":")
	name, nStr, _ := strings.Cut(rest, ":")
	n, err := strconv.Atoi(nStr)
	if err != nil || name == "" || (kind != "bm2" && kind != "pm2" && kind != "units") {
		return nil, fmt.Errorf("bad -confirm %q", *confirm)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	res := &StartResult{}
	t0 := time.Now()
	m0 := monoUs()
	portDone := pollPort(ctx, *url, *timeout, t0)
	cmd := exec.CommandContext(ctx, cmdArgs[0], cmdArgs[1:]...)
	out, err := cmd.CombinedOutput()
	res.ReturnUs = time.Since(t0).Microseconds()
	res.Output = string(out)
	if err != nil {
		res.Exit = -1
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			res.Exit = xe.ExitCode()
		}
		cancel()
		<-portDone
		return res, nil
	}
	for !confirmed(res, kind, name, n, t0, m0) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s not confirmed after %v; command output:\n%s", *confirm, *timeout, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res.PortUs = <-portDone
	if res.PortUs < 0 {
		return nil, fmt.Errorf("%s never answered 200 within %v", *url, *timeout)
	}
	return res, nil
}

// pollPort polls url every 5 ms from t0 until it answers 200 or ctx ends,
// and then sends the µs from t0 to the first answer (-1: none).
func pollPort(ctx context.Context, url string, timeout time.Duration, t0 time.Time) <-chan int64 {
	portDone := make(chan int64, 1)
	go func() {
		// A request every 5 ms, each on a fresh connection in its own
		// goroutine: one that hangs holds up nothing.
		client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
		ok := make(chan time.Time, 1)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				portDone <- -1
				return
			case at := <-ok:
				portDone <- at.Sub(t0).Microseconds()
				return
			case <-tick.C:
				go func() {
					if code, _, err := get(client, url); err == nil && code == 200 {
						select {
						case ok <- time.Now():
						default:
						}
					}
				}()
			}
		}
	}()
	return portDone
}

// confirmed tells whether the manager (kind) has confirmed n instances
// of name started at t0 (m0 on the monotonic clock), and notes in res
// when it did and when they were online.
func confirmed(res *StartResult, kind, name string, n int, t0 time.Time, m0 int64) bool {
	switch kind {
	case "bm2":
		ok, at := bm2Confirmed(name, n, t0)
		if ok {
			res.ConfirmUs = at - t0.UnixMicro()
			res.OnlineUs = bm2Online(name, n) - m0
		}
		return ok
	case "units":
		// Hand-written units: nothing confirms them; when the last
		// became active.
		res.OnlineUs = lastActive(func(i int) string { return fmt.Sprintf("%s-%d.service", name, i) }, n) - m0
		return true
	case "pm2":
		// The start of the first `pm2 jlist` that shows them all
		// online: a lower bound, in PM2's favour.
		callStart := time.Since(t0).Microseconds()
		ok := pm2Online(name, n)
		if ok {
			res.ConfirmUs = callStart
		}
		return ok
	}
	return false
}

// bm2Confirmed tells whether n distinct instances of project logged
// reuseport_confirmed after t0, and when the last of them did (journal
// realtime, µs).
func bm2Confirmed(project string, n int, t0 time.Time) (bool, int64) {
	out, err := exec.Command("journalctl", "--no-pager", "-o", "json", "-t", "bm2",
		"BM2_EVENT=reuseport_confirmed", "BM2_PROJECT="+project).Output()
	if err != nil {
		return false, 0
	}
	first := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		inst, _ := e["BM2_INSTANCE"].(string)
		tsStr, _ := e["__REALTIME_TIMESTAMP"].(string)
		ts, _ := strconv.ParseInt(tsStr, 10, 64)
		if ts < t0.UnixMicro() || inst == "" {
			continue
		}
		if old, ok := first[inst]; !ok || ts < old {
			first[inst] = ts
		}
	}
	if len(first) < n {
		return false, 0
	}
	var last int64
	for _, ts := range first {
		last = max(last, ts)
	}
	return true, last
}

// bm2Online returns the latest ActiveEnterTimestampMonotonic of the
// project's first n instances.
func bm2Online(project string, n int) int64 {
	return lastActive(func(i int) string { return fmt.Sprintf("bm2@%s-%d.service", project, i) }, n)
}

// lastActive is the latest ActiveEnterTimestampMonotonic (µs) of the
// units unit(0) … unit(n-1).
func lastActive(unit func(int) string, n int) int64 {
	var last int64
	for i := range n {
		out, err := exec.Command("systemctl", "show", "-P", "ActiveEnterTimestampMonotonic", unit(i)).Output()
		if err != nil {
			continue
		}
		v, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		last = max(last, v)
	}
	return last
}

// pm2Proc is the part of `pm2 jlist` the bench reads.
type pm2Proc struct {
	Name   string `json:"name"`
	PID    int    `json:"pid"`
	PM2Env struct {
		Status string `json:"status"`
	} `json:"pm2_env"`
}

func pm2List() ([]pm2Proc, error) {
	out, err := exec.Command("pm2", "jlist").Output()
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(out, '['); i > 0 {
		out = out[i:]
	}
	var ps []pm2Proc
	return ps, json.Unmarshal(out, &ps)
}

func pm2Online(name string, n int) bool {
	ps, err := pm2List()
	if err != nil {
		return false
	}
	c := 0
	for _, p := range ps {
		if p.Name == name && p.PM2Env.Status == "online" && p.PID > 0 {
			c++
		}
	}
	return c >= n
}

// CrashResult is what `crash` measures.
type CrashResult struct {
	RecoverUs int64 `json:"recover_us"` // SIGKILL until a new pid answered
	NewPID    int   `json:"new_pid"`
	Polls     int   `json:"polls"`  // requests sent until then
	Failed    int   `json:"failed"` // of those, how many failed (refused, reset, non-200)
	Hung      int   `json:"hung"`   // ... and how many were still unanswered a second after recovery
	HungMaxUs int64 `json:"hung_max_us,omitempty"`
	KillAtUs  int64 `json:"kill_at_us"` // realtime clock, µs since the epoch
}

// helperCrash SIGKILLs pid and, from that moment, sends a request on a
// fresh connection every 2 ms (each in its own goroutine, so that one that
// hangs holds up nothing) until one is answered by a process that is none
// of the old pids. Requests sent before that which failed, or were still
// unanswered a second later, are counted.
func helperCrash(args []string) (*CrashResult, error) {
	fs := flag.NewFlagSet("crash", flag.ContinueOnError)
	pid := fs.Int("pid", 0, "process to kill")
	old := fs.String("old", "", "comma-separated pids that do not count as recovered")
	url := fs.String("url", "", "URL to poll")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *pid <= 0 || *url == "" {
		return nil, errors.New("need -pid and -url")
	}
	oldSet := map[int]bool{*pid: true}
	for _, s := range strings.Split(*old, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			oldSet[n] = true
		}
	}
	p := &crashPolls{
		client: &http.Client{
			Timeout:   *timeout,
			Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
		},
		url:     *url,
		answers: make(chan crashAnswer, 1<<16),
		sent:    map[int]time.Time{},
		got:     map[int]crashAnswer{},
	}
	res := &CrashResult{}
	t0 := time.Now()
	res.KillAtUs = t0.UnixMicro()
	if err := syscall.Kill(*pid, syscall.SIGKILL); err != nil {
		return nil, fmt.Errorf("kill %d: %w", *pid, err)
	}
	recoveredAt, err := p.untilRecovered(res, t0, oldSet, *timeout)
	if err != nil {
		return nil, err
	}
	p.count(res, recoveredAt)
	return res, nil
}

// crashAnswer is the answer to one of the crash helper's requests.
type crashAnswer struct {
	seq    int
	sent   time.Time
	took   time.Duration
	pid    int
	failed bool
}

// crashPolls are the crash helper's requests, by sequence number: when
// each was sent, and the answers come back so far.
type crashPolls struct {
	client  *http.Client
	url     string
	answers chan crashAnswer
	sent    map[int]time.Time
	got     map[int]crashAnswer
}

// untilRecovered sends a request every 2 ms, each on its own, until a
// process not in old answers; it notes in res when, and which.
func (p *crashPolls) untilRecovered(res *CrashResult, t0 time.Time, old map[int]bool, timeout time.Duration) (time.Time, error) {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	var recoveredAt time.Time
	for recoveredAt.IsZero() {
		select {
		case <-tick.C:
			n, at := len(p.sent)+1, time.Now()
			p.sent[n] = at
			go func() {
				code, body, err := get(p.client, p.url)
				a := crashAnswer{seq: n, sent: at, took: time.Since(at)}
				if err != nil || code != 200 {
					a.failed = true
				} else {
					a.pid = bodyPID(body)
				}
				p.answers <- a
			}()
		case a := <-p.answers:
			p.got[a.seq] = a
			if !a.failed && a.pid != 0 && !old[a.pid] {
				recoveredAt = a.sent.Add(a.took)
				res.RecoverUs = recoveredAt.Sub(t0).Microseconds()
				res.NewPID = a.pid
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("no new process answered on %s within %v (%d requests sent)", p.url, timeout, len(p.sent))
		}
	}
	return recoveredAt, nil
}

// count counts the requests sent before the recovery, failed or still
// unanswered, after giving those outstanding a second more.
func (p *crashPolls) count(res *CrashResult, recoveredAt time.Time) {
	pending := func() int {
		c := 0
		for n, at := range p.sent {
			if _, ok := p.got[n]; !ok && at.Before(recoveredAt) {
				c++
			}
		}
		return c
	}
	wait := time.After(time.Second)
	for waiting := true; waiting && pending() > 0; {
		select {
		case a := <-p.answers:
			p.got[a.seq] = a
		case <-wait:
			waiting = false
		}
	}
	for n, at := range p.sent {
		if !at.Before(recoveredAt) {
			continue
		}
		res.Polls++
		a, ok := p.got[n]
		switch {
		case !ok:
			res.Hung++
			res.HungMaxUs = max(res.HungMaxUs, time.Since(at).Microseconds())
		case a.failed:
			res.Failed++
		}
	}
}

// Proc is one process as `procs` reports it.
type Proc struct {
	PID     int    `json:"pid"`
	PPID    int    `json:"ppid"`
	Comm    string `json:"comm"`
	Cmdline string `json:"cmdline"`
	RSSKiB  int64  `json:"rss_kib"`
	PSSKiB  int64  `json:"pss_kib"`
	Cgroup  string `json:"cgroup"` // the systemd (name=systemd or v2) path
}

// readProcs lists every process of the PID namespace with its memory.
func readProcs() ([]Proc, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var ps []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p := Proc{PID: pid}
		dir := filepath.Join("/proc", e.Name())
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			continue // gone
		}
		for _, l := range strings.Split(string(status), "\n") {
			k, v, _ := strings.Cut(l, ":")
			v = strings.TrimSpace(v)
			switch k {
			case "Name":
				p.Comm = v
			case "PPid":
				p.PPID, _ = strconv.Atoi(v)
			case "VmRSS":
				p.RSSKiB, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			}
		}
		if p.RSSKiB == 0 {
			continue // kernel thread or zombie
		}
		if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
			p.Cmdline = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
		}
		if b, err := os.ReadFile(filepath.Join(dir, "smaps_rollup")); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "Pss:") {
					if f := strings.Fields(l); len(f) >= 2 {
						p.PSSKiB, _ = strconv.ParseInt(f[1], 10, 64)
					}
				}
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				f := strings.SplitN(l, ":", 3)
				if len(f) == 3 && (f[1] == "name=systemd" || (f[0] == "0" && p.Cgroup == "")) {
					p.Cgroup = f[2]
				}
			}
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// GenRun is one run of the generator.
type GenRun struct {
	Projects int     `json:"projects"`
	Rep      int     `json:"rep"`
	WallMs   float64 `json:"wall_ms"`
	MaxRSS   int64   `json:"maxrss_kib"`
	Files    int     `json:"files"` // what it wrote (first run of each size only)
}

// helperGenbench times the generator binary on 1, 10, 100, 1000... project
// files of 4 cluster-mode instances each. It expects to run in a private
// mount namespace (unshare --mount --propagation private): it mounts a
// tmpfs for the project files and the output, and /dev/null over
// /dev/kmsg so that the generator's one summary line per run does not go to
// the host's kernel log. Sizes are interleaved within each repetition; one
// unmeasured run per size comes first, to warm the page cache.
func helperGenbench(args []string) ([]GenRun, error) {
	fs := flag.NewFlagSet("genbench", flag.ContinueOnError)
	gen := fs.String("gen", "", "bm2-generator to run")
	sizesStr := fs.String("sizes", "1,10,100,1000", "project counts")
	reps := fs.Int("reps", 10, "measured runs per size")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var sizes []int
	for _, s := range strings.Split(*sizesStr, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad size %q", s)
		}
		sizes = append(sizes, n)
	}
	root, err := os.MkdirTemp("", "bm2-genbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	if err := unix.Mount("bm2-genbench", root, "tmpfs", 0, "mode=755"); err != nil {
		return nil, fmt.Errorf("mount tmpfs (run me under unshare --mount --propagation private): %w", err)
	}
	defer unix.Unmount(root, unix.MNT_DETACH)
	if err := unix.Mount("/dev/null", "/dev/kmsg", "", unix.MS_BIND, ""); err != nil {
		return nil, fmt.Errorf("bind /dev/null over /dev/kmsg: %w", err)
	}
	// The binary from the tmpfs too.
	exe := filepath.Join(root, "bm2-generator")
	data, err := os.ReadFile(*gen)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		return nil, err
	}
	for _, n := range sizes {
		if err := genbenchProjects(root, n); err != nil {
			return nil, err
		}
	}
	out := filepath.Join(root, "out")
	run := func(n int) (GenRun, error) { return genbenchRun(exe, root, out, n) }
	var runs []GenRun
	for _, n := range sizes { // warm-up, and a check of what it writes
		r, err := run(n)
		if err != nil {
			return nil, err
		}
		files := 0
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files++
			}
			return nil
		})
		r.Rep, r.Files = -1, files
		runs = append(runs, r)
	}
	for rep := range *reps {
		order := append([]int(nil), sizes...)
		if rep%2 == 1 {
			sort.Sort(sort.Reverse(sort.IntSlice(order)))
		}
		for _, n := range order {
			r, err := run(n)
			if err != nil {
				return nil, err
			}
			r.Rep = rep
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// genbenchProjects writes n project files into root/cfg-n.
func genbenchProjects(root string, n int) error {
	dir := filepath.Join(root, fmt.Sprintf("cfg-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		name := fmt.Sprintf("p%04d", i)
		f := fmt.Sprintf("name = %q\nscript = \"app.js\"\ncwd = \"/srv/%s\"\nruntime = \"node\"\ninstances = 4\nport = %d\n\n[env]\nNODE_ENV = \"production\"\n",
			name, name, 10000+i)
		if err := os.WriteFile(filepath.Join(dir, name+".toml"), []byte(f), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// genbenchRun runs the generator exe once over root/cfg-n into an empty
// out: its wall time and max RSS.
func genbenchRun(exe, root, out string, n int) (GenRun, error) {
	if err := os.RemoveAll(out); err != nil {
		return GenRun{}, err
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return GenRun{}, err
	}
	cmd := exec.Command(exe, out)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "BM2_CONFIG_PATH=" + filepath.Join(root, fmt.Sprintf("cfg-%d", n))}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return GenRun{}, fmt.Errorf("%d projects: %v: %s", n, err, stderr.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := GenRun{Projects: n, WallMs: float64(wall.Nanoseconds()) / 1e6}
	if ru != nil {
		r.MaxRSS = ru.Maxrss
	}
	return r, nil
}

// SpreadResult is what `spread` measures: how many of its connections
// each process answered on (pid → connections).
type SpreadResult struct {
	PIDs map[int]int `json:"pids"`
}

// helperSpread opens n connections to addr, all of them before the first
// request (as wrk does), then asks once on each, keep-alive, and counts
// the pid each answer names: where the listeners' accept spread them.
func helperSpread(args []string) (*SpreadResult, error) {
	fs := flag.NewFlagSet("spread", flag.ContinueOnError)
	addr := fs.String("addr", "", "HOST:PORT")
	n := fs.Int("n", 64, "connections")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	conns := make([]net.Conn, 0, *n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range *n {
		c, err := net.DialTimeout("tcp", *addr, 5*time.Second)
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
	}
	res := &SpreadResult{PIDs: map[int]int{}}
	for _, c := range conns {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: bench\r\nConnection: keep-alive\r\n\r\n"); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		pid := bodyPID(string(b))
		if resp.StatusCode != http.StatusOK || pid == 0 {
			return nil, fmt.Errorf("answer %d %q names no pid", resp.StatusCode, b)
		}
		res.PIDs[pid]++
	}
	return res, nil
}
