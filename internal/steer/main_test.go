package steer

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// The test binary is also the other processes of the tests, chosen by
// BM2_STEER_CHILD:
//
//	listen PORT   an app: a SO_REUSEPORT listener on 127.0.0.1:PORT (0: any)
//	              prints "PID FD PORT", then "a" per accepted connection,
//	              which it closes
//	caps STEP ... a step of TestCapabilities, run with fewer capabilities
//	hold PORT     an instance of the add and drain tests: as listen, but
//	              it keeps each connection open unread
func TestMain(m *testing.M) {
	switch os.Getenv("BM2_STEER_CHILD") {
	case "":
		os.Exit(m.Run())
	case "listen":
		port, _ := strconv.Atoi(os.Getenv("BM2_STEER_PORT"))
		childListen(port, false)
	case "hold":
		port, _ := strconv.Atoi(os.Getenv("BM2_STEER_PORT"))
		childListen(port, true)
	case "caps":
		fmt.Println(capsStep(os.Getenv("BM2_STEER_STEP"), os.Getenv("BM2_STEER_ARG")))
	}
	os.Exit(0)
}

// childListen is the app of listen and hold: it prints "PID FD PORT",
// then "a" per connection it accepts, and closes each one, or with hold
// keeps it open unread (a request being worked on).
func childListen(port int, hold bool) {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP)
	if err == nil {
		err = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}
	if err == nil {
		err = unix.Bind(s, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	}
	if err == nil {
		err = unix.Listen(s, 64)
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	sa, _ := unix.Getsockname(s)
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, os.Getpid(), s, sa.(*unix.SockaddrInet4).Port)
	w.Flush()
	var held []int
	for {
		c, _, err := unix.Accept(s)
		if err != nil {
			os.Exit(1)
		}
		if hold {
			held = append(held, c)
		} else {
			unix.Close(c)
		}
		fmt.Fprintln(w, "a")
		w.Flush()
	}
}
