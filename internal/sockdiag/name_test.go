package sockdiag

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mainThreadHelper, set in the environment, makes the test binary a
// listener whose main thread is called MainThread, as Node.js 24 calls
// its own: init runs on the main thread, the one /proc/<pid>/comm names.
const mainThreadHelper = "BM2_SOCKDIAG_MAINTHREAD"

func init() {
	if os.Getenv(mainThreadHelper) != "1" {
		return
	}
	name, _ := unix.BytePtrFromString("MainThread")
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(name)), 0, 0, 0); err != nil {
		os.Exit(3)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		os.Exit(4)
	}
	os.Stdout.WriteString(strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "\n")
	time.Sleep(30 * time.Second)
	os.Exit(0)
}

// A process is named by its command line, not by its main thread's name:
// a Node.js 24 app on the port was "MainThread".
func TestOwnerOfNamesTheProcessNotItsThread(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainThreadHelper+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm")
	if err != nil || strings.TrimSpace(string(comm)) != "MainThread" {
		t.Fatalf("helper's comm is %q (%v), want MainThread", comm, err)
	}
	ls := mustListeners(t, port)
	if len(ls) != 1 {
		t.Fatalf("port %d: %d listeners", port, len(ls))
	}
	pid, name, ok := OwnerOf(ls[0])
	if want := filepath.Base(os.Args[0]); !ok || pid != cmd.Process.Pid || name != want {
		t.Errorf("OwnerOf = %d %q %v, want %d %q true", pid, name, ok, cmd.Process.Pid, want)
	}
}

func TestProcessName(t *testing.T) {
	proc := t.TempDir()
	for i, c := range []struct {
		cmdline, comm string // "" cmdline: none (a zombie); "-": no file
		want          string
	}{
		{"/usr/local/bin/node\x00server.js\x00", "MainThread", "node"},
		{"node\x00server.js\x00", "MainThread", "node"},
		{"/usr/bin/python3\x00-m\x00http.server\x00", "python3", "python3"},
		// A title the process set over its argv (process.title).
		{"PM2 v6.0.8: God Daemon (/root/.pm2)\x00\x00\x00", "PM2 v6.0.8: God", "PM2 v6.0.8: God Daemon (/root/.pm2)"},
		{"", "kworker/0:1", "kworker/0:1"},
		{"-", "app", "app"},
		// Anything the app writes is kept as is here: printing it escaped
		// is the caller's (reason.Clean).
		{"/srv/\x1b[2Jevil\x00", "x", "\x1b[2Jevil"},
		{"/\x00", "x", "/"},
	} {
		pid := 100 + i
		dir := filepath.Join(proc, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if c.cmdline != "-" {
			if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(c.cmdline), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "comm"), []byte(c.comm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, ok := processName(proc, pid); !ok || got != c.want {
			t.Errorf("cmdline %q, comm %q: %q %v, want %q", c.cmdline, c.comm, got, ok, c.want)
		}
	}
	if _, ok := processName(proc, 99); ok {
		t.Error("a process that is gone has a name")
	}
	// A command line longer than what is read is cut, not read whole.
	dir := filepath.Join(proc, "98")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "cmdline"), []byte(strings.Repeat("a", 3*maxArgv0)), 0o644)
	if got, _ := processName(proc, 98); len(got) != maxArgv0 {
		t.Errorf("a %d-byte argv[0] gave %d bytes", 3*maxArgv0, len(got))
	}
}
