package steer

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// An app is a child process with a listener, as an instance is to bm2.
type app struct {
	cmd     *exec.Cmd
	pid, fd int
	port    int
	accepts atomic.Int64
}

// startApp runs the test binary as an app listening on port, as cred
// (nil: this process's user), from exe (the test binary, or a copy that
// another user can run).
func startApp(t *testing.T, exe string, port int, cred *syscall.Credential) *app {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = childEnv("BM2_STEER_CHILD", "listen", "BM2_STEER_PORT", strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	return runApp(t, cmd)
}

// runApp starts cmd, the test binary as an app (listen or hold), reads
// the "PID FD PORT" it prints first, and counts the "a" it prints per
// connection it accepts.
func runApp(t *testing.T, cmd *exec.Cmd) *app {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	a := &app{cmd: cmd}
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if _, serr := fmt.Sscan(line, &a.pid, &a.fd, &a.port); err != nil || serr != nil {
		t.Fatalf("app said %q: %v %v", line, err, serr)
	}
	go func() {
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				io.Copy(io.Discard, r)
				return
			}
			if strings.TrimSpace(l) == "a" {
				a.accepts.Add(1)
			}
		}
	}()
	return a
}

// kill ends the app, and with it its listener.
func (a *app) kill(t *testing.T) {
	t.Helper()
	a.cmd.Process.Kill()
	a.cmd.Wait()
}

// getfd is what bm2 does to take an instance's listener: pidfd_open and
// pidfd_getfd (Linux 5.6). The copy is this process's to close.
func getfd(pid, fd int) (int, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1, fmt.Errorf("pidfd_open: %w", err)
	}
	defer unix.Close(pidfd)
	nfd, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		return -1, fmt.Errorf("pidfd_getfd: %w", err)
	}
	return nfd, nil
}

// The listener of another process, taken with pidfd_getfd, steers like
// one of this process: the copy goes in the sockarray and is closed, the
// app's connections arrive in the app.
func TestAppListenerByPidfd(t *testing.T) {
	needSteering(t)
	port, srv := group(t, 1)
	a := startApp(t, os.Args[0], port, nil)
	g := newGroup(t, port, srv)
	nfd, err := getfd(a.pid, a.fd)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Add(1, nfd); err != nil {
		t.Fatal(err)
	}
	unix.Close(nfd)
	if !g.Filled(1) {
		t.Fatal("the slot emptied when the copy was closed")
	}
	connect(t, port, 0, srv)
	for i := 0; i < 64; i++ {
		c, err := dial(port)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for srv[0].accepts.Load()+a.accepts.Load() < 64 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	got := []int{int(srv[0].accepts.Load()), int(a.accepts.Load())}
	t.Logf("MEASURE this process and an app whose listener came by pidfd_getfd, 64 connections: %v", got)
	if got[0] != 32 || got[1] != 32 {
		t.Errorf("accepts %v, want [32 32]", got)
	}
	// The app dies: its slot empties, its turn falls back to the hash,
	// and this process gets everything.
	a.cmd.Process.Kill()
	a.cmd.Wait()
	if g.Filled(1) {
		t.Error("the dead app's slot is still filled")
	}
	if got := connect(t, port, 16, srv); got[0] != 16 {
		t.Errorf("after the app died: %v", got)
	}
}
