package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Net is a network of a test's own: a bridge in a network namespace
// created for it, which sandboxes attach to as hosts (a fleet on one
// machine). Its addresses exist only in its namespace and in the
// sandboxes attached to it; nothing of it is ever in the host's network
// namespace, and it dies with the process that holds the namespace.
//
// The namespace itself is a third host on the bridge, at the subnet's
// first address, where a test runs host programs (a gateway, a load
// generator) with [Net.Command].
type Net struct {
	prefix netip.Prefix
	hold   *exec.Cmd // unshare --net sleep: holds the namespace
	ns     *os.File  // the namespace, opened once the process is in it
	mu     sync.Mutex
	seq    int // veth pairs created
	closed bool
}

// bridgeName is the bridge in a Net's namespace.
const bridgeName = "br0"

// NewNet creates a Net on prefix (an IPv4 /24 or so of private
// addresses, e.g. 10.213.0.0/24): a bridge with the prefix's first
// address in a namespace of its own. It is closed by t.Cleanup.
func NewNet(t testing.TB, prefix netip.Prefix) *Net {
	t.Helper()
	RequireRoot(t)
	n, err := newNet(prefix)
	if err != nil {
		t.Fatalf("test network %s: %v", prefix, err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return n
}

// OpenNet is NewNet for a program that is not a test (the bench): the
// caller closes the Net.
func OpenNet(prefix netip.Prefix) (*Net, error) {
	if err := checkHost(); err != nil {
		return nil, err
	}
	return newNet(prefix)
}

func newNet(prefix netip.Prefix) (_ *Net, err error) {
	if !prefix.Addr().Is4() || prefix.Bits() < 8 || prefix.Bits() > 30 || !prefix.Addr().IsPrivate() {
		return nil, fmt.Errorf("want a private IPv4 prefix between /8 and /30, got %s", prefix)
	}
	prefix = prefix.Masked()
	n := &Net{prefix: prefix}
	n.hold = exec.Command("unshare", "--net", "--", "sleep", "infinity")
	n.hold.Env = []string{"PATH=" + sandboxPath}
	n.hold.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.hold.Start(); err != nil {
		return nil, fmt.Errorf("start unshare --net: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Close())
		}
	}()
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return nil, err
	}
	pid := n.hold.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// unshare creates the namespace and then execs sleep: once the
	// process runs sleep, it is in its own namespace for good.
	err = pollUntil(ctx, 5*time.Millisecond, func() (bool, error) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			return false, fmt.Errorf("unshare --net exited: %w", err)
		}
		if strings.TrimSpace(string(comm)) != "sleep" {
			return false, nil
		}
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			return false, err
		}
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil || link == self {
			f.Close()
			return false, fmt.Errorf("the network namespace of %d is the host's (%s)", pid, link)
		}
		n.ns = f
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("wait for the network namespace: %w", err)
	}
	gw := prefix.Addr().Next()
	script := fmt.Sprintf(`set -e
ip link set lo up
ip link add %[1]s type bridge
ip addr add %[2]s/%[3]d dev %[1]s
ip link set %[1]s up`, bridgeName, gw, prefix.Bits())
	if out, err := n.Command(ctx, "sh", "-c", script).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("set up the bridge: %w\n%s", err, out)
	}
	return n, nil
}

// Addr is the address of the Net's own namespace on the bridge.
func (n *Net) Addr() netip.Addr { return n.prefix.Addr().Next() }

// Command returns a command that runs a host program in the Net's
// network namespace (and nowhere else: mounts, processes and the file
// system are the host's). It dies with the test process.
func (n *Net) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	full := append([]string{"--net=/proc/self/fd/3", "--", "setpriv", "--pdeathsig", "KILL", "--", name}, args...)
	cmd := exec.CommandContext(ctx, "nsenter", full...)
	cmd.ExtraFiles = []*os.File{n.ns}
	cmd.Env = []string{"PATH=" + sandboxPath, "HOME=/root", "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	return cmd
}

// Attach connects a sandbox to the bridge: a veth pair whose one end is
// on the bridge and whose other end is eth0 in the sandbox, with addr
// (which must lie in the Net's prefix). The pair is created in the Net's
// namespace and its second end moved straight into the sandbox's, so it
// never appears in the host's.
func (n *Net) Attach(m *Machine, addr netip.Addr) error {
	if !n.prefix.Contains(addr) || addr == n.Addr() || addr == n.prefix.Addr() {
		return fmt.Errorf("attach %s: %s is not a free host address of %s", m.ID(), addr, n.prefix)
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return fmt.Errorf("attach %s: the network is closed", m.ID())
	}
	n.seq++
	veth := "veth" + strconv.Itoa(n.seq)
	n.mu.Unlock()

	m.nsMu.RLock()
	if m.ns == nil {
		m.nsMu.RUnlock()
		return fmt.Errorf("attach %s: %w", m.ID(), ErrClosed)
	}
	var mnet *os.File
	for i, t := range nsTypes {
		if t.file == "net" {
			mnet = m.ns[i]
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// fd 3: the Net's namespace (nsenter), fd 4: the sandbox's.
	script := fmt.Sprintf(`set -e
ip link add %[1]s type veth peer name eth0 netns /proc/self/fd/4
ip link set %[1]s master %[2]s
ip link set %[1]s up`, veth, bridgeName)
	cmd := n.Command(ctx, "sh", "-c", script)
	cmd.ExtraFiles = append(cmd.ExtraFiles, mnet)
	out, err := cmd.CombinedOutput()
	m.nsMu.RUnlock()
	if err != nil {
		return fmt.Errorf("attach %s: %w\n%s", m.ID(), err, out)
	}
	var o, e bytes.Buffer
	err = m.run(ctx, nil, &o, &e, []string{"sh", "-c", fmt.Sprintf(`set -e
ip addr add %s/%d dev eth0
ip link set eth0 up`, addr, n.prefix.Bits())})
	if err != nil {
		return fmt.Errorf("attach %s: address %s: %w\n%s", m.ID(), addr, err, e.String())
	}
	return nil
}

// Close kills the process that holds the namespace; the bridge and the
// veth ends in it go with the namespace (and with them the other ends in
// the sandboxes).
func (n *Net) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	if n.ns != nil {
		n.ns.Close()
	}
	if n.hold != nil && n.hold.Process != nil {
		n.hold.Process.Kill()
		n.hold.Wait()
	}
	return nil
}
