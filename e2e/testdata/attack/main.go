// Command attack is the e2e suite's stand-in for an app that turns on
// bm2's own processes: built static by the tests, run inside a bed.
//
//	attack mem SECONDS
//	    as an app's user: find a `bm2-probe health-get` process of this
//	    user and open its /proc/PID/mem for writing, as an app would to
//	    make it run code of its own. Prints "found PID", then "open ok"
//	    or "open ERRNO"; exits 2 if none ran within SECONDS.
//	attack bind CGROUP UID GID PORT
//	    as root: join the cgroup v2 directory CGROUP (a unit's), become
//	    UID:GID, and bind PORT on 0.0.0.0: "bind ok" or "bind ERRNO".
//	    What a process of that unit, driven by the app, could bind.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: attack mem SECONDS | bind CGROUP UID GID PORT")
	}
	switch os.Args[1] {
	case "mem":
		secs, _ := strconv.Atoi(os.Args[2])
		mem(time.Duration(secs) * time.Second)
	case "bind":
		uid, _ := strconv.Atoi(os.Args[3])
		gid, _ := strconv.Atoi(os.Args[4])
		port, _ := strconv.Atoi(os.Args[5])
		bind(os.Args[2], uid, gid, port)
	default:
		fail("unknown mode " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "attack:", msg)
	os.Exit(1)
}

func errno(err error) string {
	if e, ok := err.(*os.PathError); ok {
		err = e.Err
	}
	if e, ok := err.(syscall.Errno); ok {
		switch e {
		case syscall.EACCES:
			return "EACCES"
		case syscall.EPERM:
			return "EPERM"
		}
	}
	return err.Error()
}

func mem(within time.Duration) {
	me := strconv.Itoa(os.Getuid())
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			cmd, err := os.ReadFile(d + "/cmdline")
			if err != nil || !bytes.Contains(cmd, []byte("\x00health-get\x00")) {
				continue
			}
			st, err := os.ReadFile(d + "/status")
			if err != nil || !strings.Contains(string(st), "\nUid:\t"+me+"\t") {
				continue
			}
			fmt.Println("found", filepath.Base(d))
			f, err := os.OpenFile(d+"/mem", os.O_RDWR, 0)
			if err != nil {
				fmt.Println("open", errno(err))
				return
			}
			f.Close()
			fmt.Println("open ok")
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	os.Exit(2)
}

func bind(cgroup string, uid, gid, port int) {
	if err := os.WriteFile(filepath.Join(cgroup, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		fail("join " + cgroup + ": " + err.Error())
	}
	if err := syscall.Setgroups(nil); err != nil {
		fail(err.Error())
	}
	if err := syscall.Setgid(gid); err != nil {
		fail(err.Error())
	}
	if err := syscall.Setuid(uid); err != nil {
		fail(err.Error())
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		fail(err.Error())
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port}); err != nil {
		fmt.Println("bind", errno(err))
		return
	}
	fmt.Println("bind ok")
}
