package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/e2e/runtimes"
	"github.com/bm2dev/bm2/e2e/sandbox"
	"github.com/bm2dev/bm2/internal/gateway"
)

// fleetNet is the fleet figure's network: the gateway's namespace is
// 10.214.0.1, the hosts .2 and .3 (addresses that exist only in the
// namespaces the figure creates).
var fleetNet = netip.MustParsePrefix("10.214.0.0/24")

// fleetModes are the fleet project's two shapes (2 instances on port
// 3000 on each host): the rest of its project file and its ports.
var fleetModes = []struct {
	name, toml string
	ports      []int
}{
	{"cluster", "", []int{3000}},
	{"fork", "exec_mode = \"fork\"\n", []int{3000, 3001}},
}

// fleetBed is the fleet figure's: its network, its two hosts and their
// addresses, the gateway's directory, the command that writes its
// configuration, and its URL.
type fleetBed struct {
	n          *sandbox.Net
	hosts      []*bed
	addrs      []netip.Addr
	dir        string
	gen, gwURL string
}

// fleet: two bm2 hosts with the same project behind one nginx, the load
// from the gateway's namespace; bm2 stop on one host, and bm2 reload on
// each host in turn, under load.
func (r *runner) fleet(ctx context.Context) error {
	n, err := sandbox.OpenNet(fleetNet)
	if err != nil {
		return err
	}
	defer n.Close()
	f := &fleetBed{n: n, addrs: []netip.Addr{netip.MustParseAddr("10.214.0.2"), netip.MustParseAddr("10.214.0.3")}}
	defer func() {
		for _, h := range f.hosts {
			h.Close()
			r.booted.Add(-1)
		}
	}()
	if err := r.fleetHosts(ctx, f); err != nil {
		return err
	}
	f.dir, err = os.MkdirTemp("", "bm2-bench-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(f.dir)
	if err := os.Chmod(f.dir, 0o755); err != nil {
		return err
	}
	lua, _ := apps.ReadFile("apps/report.lua")
	if err := os.WriteFile(filepath.Join(f.dir, "report.lua"), lua, 0o644); err != nil {
		return err
	}
	f.gwURL = fmt.Sprintf("http://%s:8080/", n.Addr())
	f.gen = fmt.Sprintf("bm2 gateway nginx fleet --host %s --host %s --listen %s:8080", f.addrs[0], f.addrs[1], n.Addr())
	r.record("fleet",
		"# on each host: make -o build install (as in the bm2 sandbox), then /srv/fleet/bm2.toml = name = \"fleet\", script = \"app.js\", runtime = \"node\", instances = 2, port = 3000 (cluster mode; then exec_mode = \"fork\")",
		"cd /srv/fleet && bm2 serve >/dev/null && "+probesDone,
		"cd /srv/fleet && "+f.gen+"   # on host A: the gateway",
		"nginx -p DIR -c DIR/nginx.conf -e stderr -g 'pid DIR/nginx.pid; daemon off; master_process off;'   # in the gateway's namespace",
		fmt.Sprintf("wrk -t%d -c%d -d%ds -s DIR/report.lua %s   # in the gateway's namespace, with and without -H 'Connection: close'", r.s.WrkThreads, r.s.WrkConns, int(r.s.ReloadDur.Seconds()), f.gwURL),
		"# 2 s in: bm2 stop fleet on host A (timed); afterwards, not timed: bm2 start fleet on host A, and 2.5 s (past fail_timeout=2s)",
		"# or: bm2 reload fleet on host A, then on host B (timed together); afterwards, not timed: "+probesDone+" on both, and 2 s")
	for _, mode := range fleetModes {
		if err := r.fleetMode(ctx, f, mode.name, mode.toml, mode.ports); err != nil {
			return err
		}
	}
	return nil
}

// fleetHosts boots the two hosts, installs bm2 and the app on each and
// puts them on the network.
func (r *runner) fleetHosts(ctx context.Context, f *fleetBed) error {
	appJS, _ := apps.ReadFile("apps/app.js")
	r.logf("fleet: booting two more bm2 sandboxes as hosts %s and %s", f.addrs[0], f.addrs[1])
	for i, name := range []string{"bench-fleet-a", "bench-fleet-b"} {
		m, err := sandbox.Boot(ctx, sandbox.Options{Binds: []string{r.repo + ":ro", r.snap + ":ro", runtimes.CacheDir() + ":ro"}, Name: name})
		if err != nil {
			return err
		}
		r.booted.Add(1)
		h := &bed{Machine: m, kind: "bm2"}
		f.hosts = append(f.hosts, h)
		install := installScript(r.repo, r.snap, "/tmp/bm2-src", "") + fmt.Sprintf("\ninstall -m 0755 %q /usr/local/bin/node\ninstall -d -m 0755 /srv/fleet", r.node)
		if out, err := h.sh(ctx, install); err != nil {
			return fmt.Errorf("install bm2 on %s: %w\n%s", name, err, out)
		}
		if err := h.WriteFile("/srv/fleet/app.js", appJS, 0o644); err != nil {
			return err
		}
		if err := f.n.Attach(m, f.addrs[i]); err != nil {
			return err
		}
	}
	return nil
}

// fleetAction is what the fleet figure does under load, and what puts
// the hosts back afterwards.
type fleetAction struct {
	name string
	do   func() error
	undo string
}

// fleetMode measures one shape of the fleet's project: served on both
// hosts, the gateway started, then each action under each load.
func (r *runner) fleetMode(ctx context.Context, f *fleetBed, name, extra string, ports []int) error {
	toml := "name = \"fleet\"\nscript = \"app.js\"\nruntime = \"node\"\ninstances = 2\nport = 3000\n" + extra
	for _, h := range f.hosts {
		if err := h.WriteFile("/srv/fleet/bm2.toml", []byte(toml), 0o644); err != nil {
			return err
		}
		if out, err := h.sh(ctx, "cd /srv/fleet && bm2 serve >/dev/null && "+probesDone); err != nil {
			return fmt.Errorf("bm2 serve on %s: %w\n%s", h.ID(), err, out)
		}
	}
	for _, p := range ports {
		for i, a := range f.addrs {
			if err := netWait(ctx, f.n, 15*time.Second, fmt.Sprintf("http://%s:%d/", a, p)); err != nil {
				return fmt.Errorf("host %c: %w", 'A'+i, err)
			}
		}
	}
	snippet, err := f.hosts[0].sh(ctx, "cd /srv/fleet && "+f.gen)
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", f.gen, err, snippet)
	}
	g, err := startHostGateway(ctx, f.n, f.dir, snippet, f.gwURL)
	if err != nil {
		return err
	}
	actions := []fleetAction{
		{"bm2 stop on host A", func() error { return shOK(ctx, f.hosts[0], "bm2 stop fleet >/dev/null") },
			"bm2 start fleet >/dev/null && " + probesDone},
		{"bm2 reload on host A, then on host B", func() error {
			for _, h := range f.hosts {
				if err := shOK(ctx, h, "bm2 reload fleet >/dev/null"); err != nil {
					return err
				}
			}
			return nil
		}, probesDone},
	}
	for rep := range r.s.FleetReps {
		for _, load := range []string{KeepAlive, Close} {
			for _, a := range actions {
				if err := r.fleetOnce(ctx, f, name, ports, a, load, rep); err != nil {
					g.stop()
					return err
				}
			}
		}
	}
	g.stop()
	for _, h := range f.hosts {
		h.sh(ctx, "bm2 delete fleet >/dev/null")
	}
	return nil
}

// fleetOnce is one action under one load: measured, then undone, and the
// gateway given time to try every server again.
func (r *runner) fleetOnce(ctx context.Context, f *fleetBed, mode string, ports []int, a fleetAction, load string, rep int) error {
	w, took, err := r.fleetLoad(ctx, f.n, filepath.Join(f.dir, "report.lua"), load, f.gwURL, a.do)
	if err != nil {
		return fmt.Errorf("fleet (%s), %s: %w", mode, a.name, err)
	}
	v := fmt.Sprintf("%s mode: %s, %s", mode, a.name, load)
	r.sample("fleet", v, "failed requests", rep, float64(w.Errors()))
	r.sample("fleet", v, "requests", rep, float64(w.Requests))
	r.sample("fleet", v, "bm2 command took (ms)", rep, took)
	r.logf("fleet %d/%d %s: %d of %d requests failed; the command took %.0f ms", rep+1, r.s.FleetReps, v, w.Errors(), w.Requests, took)
	for _, h := range f.hosts {
		if out, err := h.sh(ctx, a.undo); err != nil {
			return fmt.Errorf("after %s on %s: %w\n%s", a.name, h.ID(), err, out)
		}
	}
	for _, p := range ports {
		if err := netWait(ctx, f.n, 15*time.Second, fmt.Sprintf("http://%s:%d/", f.addrs[0], p)); err != nil {
			return err
		}
	}
	time.Sleep(2500 * time.Millisecond) // past fail_timeout: nginx tries every server again
	return nil
}

// shOK runs a script on a host and fails with its output.
func shOK(ctx context.Context, b *bed, script string) error {
	if out, err := b.sh(ctx, script); err != nil {
		return fmt.Errorf("%s: %w\n%s", script, err, out)
	}
	return nil
}

// fleetLoad runs wrk against url from the network's namespace for the
// reload figures' time, runs action 2 s in and returns wrk's totals and
// how long the action took (ms).
func (r *runner) fleetLoad(ctx context.Context, n *sandbox.Net, lua, mode, url string, action func() error) (WrkResult, float64, error) {
	s := r.s
	args := []string{fmt.Sprintf("-t%d", s.WrkThreads), fmt.Sprintf("-c%d", s.WrkConns), fmt.Sprintf("-d%ds", int(s.ReloadDur.Seconds())), "-s", lua}
	if mode == Close {
		args = append(args, "-H", "Connection: close")
	}
	cmd := n.Command(ctx, "wrk", append(args, url)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return WrkResult{}, 0, fmt.Errorf("start wrk: %w", err)
	}
	time.Sleep(2 * time.Second)
	start := time.Now()
	aerr := action()
	took := float64(time.Since(start).Microseconds()) / 1000
	werr := cmd.Wait()
	if aerr != nil {
		return WrkResult{}, took, aerr
	}
	if werr != nil {
		return WrkResult{}, took, fmt.Errorf("wrk: %w\n%s", werr, out.String())
	}
	w, err := parseWrk(out.String())
	return w, took, err
}

// hostGateway is nginx in the fleet network's namespace, a host program
// in a private prefix dir.
type hostGateway struct {
	cmd  *exec.Cmd
	errs bytes.Buffer
}

// startHostGateway runs nginx on the snippet in dir and waits until url
// answers.
func startHostGateway(ctx context.Context, n *sandbox.Net, dir, snippet, url string) (*hostGateway, error) {
	if err := os.WriteFile(filepath.Join(dir, "bm2.conf"), []byte(snippet), 0o644); err != nil {
		return nil, err
	}
	conf := gateway.NginxStandalone(dir, "", "    include "+filepath.Join(dir, "bm2.conf")+";")
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	// One process (master_process off), so that it dies with this one.
	g := &hostGateway{}
	g.cmd = n.Command(context.WithoutCancel(ctx), "nginx", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr",
		"-g", "pid "+filepath.Join(dir, "nginx.pid")+"; daemon off; master_process off;")
	g.cmd.Stdout, g.cmd.Stderr = &g.errs, &g.errs
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start nginx: %w", err)
	}
	if err := netWait(ctx, n, 10*time.Second, url); err != nil {
		g.stop()
		return nil, fmt.Errorf("the gateway: %w\nnginx: %s", err, g.errs.String())
	}
	return g, nil
}

func (g *hostGateway) stop() {
	if g.cmd.Process == nil || g.cmd.ProcessState != nil {
		return
	}
	g.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		g.cmd.Process.Kill()
		<-done
	}
}

// netWait waits until url answers from the network's namespace.
func netWait(ctx context.Context, n *sandbox.Net, timeout time.Duration, url string) error {
	deadline := time.Now().Add(timeout)
	for {
		out, err := n.Command(ctx, "curl", "-sf", "--max-time", "2", "-o", "/dev/null", url).CombinedOutput()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("%s does not answer after %v: %s", url, timeout, out), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
