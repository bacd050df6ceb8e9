package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/probehelper"
)

// probePortsCommand is the hidden command through which root probes ports
// as a project's user.
const probePortsCommand = "__probe-ports"

// checkPortsIn probes ports from this process, as its effective UID.
func checkPortsIn(_ context.Context, ports []int) ([]probehelper.PortState, error) {
	out := make([]probehelper.PortState, len(ports))
	for i, p := range ports {
		s, err := probehelper.CheckPort(p)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// checkPortsAs probes ports as userName would see them. SO_REUSEPORT only
// lets sockets of the same effective UID join, so root sees a reusePort
// app running as another user as exclusive; root therefore runs the probe
// in a child process (bm2 __probe-ports) with the user's credentials. When
// that is not possible (not root, unknown user) it probes in-process.
func checkPortsAs(ctx context.Context, userName string, ports []int) ([]probehelper.PortState, error) {
	if os.Geteuid() != 0 || userName == "" || userName == "root" || userName == "0" {
		return checkPortsIn(ctx, ports)
	}
	u, err := lookupUser(userName)
	if err != nil {
		return checkPortsIn(ctx, ports)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	exe, err3 := os.Executable()
	if err1 != nil || err2 != nil || err3 != nil || uid == 0 {
		return checkPortsIn(ctx, ports)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args := []string{probePortsCommand}
	for _, p := range ports {
		args = append(args, strconv.Itoa(p))
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}}
	out, err := cmd.Output()
	if err != nil {
		return checkPortsIn(ctx, ports)
	}
	states, err := parseProbeOutput(string(out), ports)
	if err != nil {
		return checkPortsIn(ctx, ports)
	}
	return states, nil
}

func lookupUser(name string) (*user.User, error) {
	if _, err := strconv.Atoi(name); err == nil {
		return user.LookupId(name)
	}
	return user.Lookup(name)
}

// probePorts is the hidden command: one "<port> <state>" line per port.
func (a *App) probePorts(args []string) error {
	ports := make([]int, len(args))
	for i, s := range args {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 65535 {
			return usageErr(probePortsCommand, "%q is not a port", s)
		}
		ports[i] = n
	}
	states, err := checkPortsIn(context.Background(), ports)
	if err != nil {
		return err
	}
	for i, s := range states {
		fmt.Fprintf(a.Out, "%d %s\n", ports[i], s)
	}
	return nil
}

func parseProbeOutput(out string, ports []int) ([]probehelper.PortState, error) {
	byName := map[string]probehelper.PortState{
		probehelper.Free.String():      probehelper.Free,
		probehelper.Shared.String():    probehelper.Shared,
		probehelper.Exclusive.String(): probehelper.Exclusive,
	}
	states := make([]probehelper.PortState, 0, len(ports))
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		i := len(states)
		if len(f) != 2 || i >= len(ports) || f[0] != strconv.Itoa(ports[i]) {
			return nil, fmt.Errorf("unexpected probe output %q", sc.Text())
		}
		s, ok := byName[f[1]]
		if !ok {
			return nil, fmt.Errorf("unexpected probe output %q", sc.Text())
		}
		states = append(states, s)
	}
	if len(states) != len(ports) {
		return nil, fmt.Errorf("probe answered %d of %d ports", len(states), len(ports))
	}
	return states, nil
}

// portLines renders the ports part of bm2 check: one line for the whole
// range when every port is in the same state, one line per port otherwise.
func portLines(ports []int, states []probehelper.PortState) []string {
	same := true
	for _, s := range states[1:] {
		if s != states[0] {
			same = false
		}
	}
	if same {
		return []string{fmt.Sprintf("ports %d~%d: %s", ports[0], ports[len(ports)-1], states[0].Describe())}
	}
	lines := make([]string, len(ports))
	for i, p := range ports {
		lines[i] = fmt.Sprintf("port %d: %s", p, states[i].Describe())
	}
	return lines
}
