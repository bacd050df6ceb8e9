package sockdiag

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// fakeProc lays out a /proc with one process per entry of fds, its
// descriptors linking where the strings say.
func fakeProc(t *testing.T, fds map[uint32][]string) string {
	t.Helper()
	proc := t.TempDir()
	for pid, links := range fds {
		dir := filepath.Join(proc, strconv.FormatUint(uint64(pid), 10), "fd")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, l := range links {
			if err := os.Symlink(l, filepath.Join(dir, strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		comm := filepath.Join(proc, strconv.FormatUint(uint64(pid), 10), "comm")
		if err := os.WriteFile(comm, []byte("app"+strconv.FormatUint(uint64(pid), 10)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return proc
}

func TestSocketsOf(t *testing.T) {
	proc := fakeProc(t, map[uint32][]string{
		42: {"/dev/null", "socket:[123]", "pipe:[9]", "socket:[456]", "anon_inode:[eventpoll]", "socket:[]", "socket:[x]", "socket:[789"},
	})
	inodes, n, err := socketsOf(proc, 42, 0)
	slices.Sort(inodes)
	if err != nil || n != 8 || !slices.Equal(inodes, []uint64{123, 456}) {
		t.Errorf("socketsOf = %v, %d, %v; want [123 456], 8 descriptors", inodes, n, err)
	}
	if _, _, err := socketsOf(proc, 43, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no such process: %v, want fs.ErrNotExist", err)
	}
}

func TestSocketsOfIsBounded(t *testing.T) {
	// A process holding more descriptors than asked for is read up to
	// the limit, no further, and said to hold more.
	links := make([]string, 50)
	for i := range links {
		links[i] = "socket:[" + strconv.Itoa(1000+i) + "]"
	}
	proc := fakeProc(t, map[uint32][]string{7: links})
	for _, limit := range []int{1, 10, 49} {
		inodes, n, err := socketsOf(proc, 7, limit)
		if !errors.Is(err, ErrTooManyFDs) || n != limit || len(inodes) != limit {
			t.Errorf("limit %d: %d inodes, %d read, %v; want %d read and ErrTooManyFDs", limit, len(inodes), n, err, limit)
		}
	}
	for _, limit := range []int{0, 50, 51, MaxFDs + 1} {
		inodes, n, err := socketsOf(proc, 7, limit)
		if err != nil || n != 50 || len(inodes) != 50 {
			t.Errorf("limit %d: %d inodes, %d read, %v; want all 50", limit, len(inodes), n, err)
		}
	}
	// More than one batch of the directory.
	many := make([]string, fdBatch*2+3)
	for i := range many {
		many[i] = "socket:[" + strconv.Itoa(i+1) + "]"
	}
	proc = fakeProc(t, map[uint32][]string{8: many})
	if inodes, n, err := socketsOf(proc, 8, 0); err != nil || n != len(many) || len(inodes) != len(many) {
		t.Errorf("%d descriptors: %d inodes, %d read, %v", len(many), len(inodes), n, err)
	}
	if _, n, err := socketsOf(proc, 8, fdBatch+1); !errors.Is(err, ErrTooManyFDs) || n != fdBatch+1 {
		t.Errorf("limit past one batch: %d read, %v", n, err)
	}
}

func TestHoldsAndOwnerOfFakeProc(t *testing.T) {
	proc := fakeProc(t, map[uint32][]string{
		10: {"/dev/null", "socket:[5]"},
		20: {"socket:[6]", "socket:[7]"},
		30: {"socket:[7]"},
	})
	for _, c := range []struct {
		pids   []uint32
		inodes []uint64
		want   bool
	}{
		{[]uint32{10}, []uint64{5}, true},
		{[]uint32{10}, []uint64{6}, false},
		{[]uint32{10, 20}, []uint64{8, 7}, true},
		{[]uint32{99, 20}, []uint64{6}, true}, // a process gone is skipped
		{[]uint32{99}, []uint64{6}, false},
		{nil, []uint64{6}, false},
	} {
		_, got, err := holder(proc, c.pids, c.inodes)
		if got != c.want || err != nil {
			t.Errorf("holder(%v, %v) = %v, %v; want %v", c.pids, c.inodes, got, err, c.want)
		}
	}
	// Which descriptor: the first process in the order given that holds
	// one, its lowest descriptor holding any of them (what pidfd_getfd
	// is given).
	for _, c := range []struct {
		pids   []uint32
		inodes []uint64
		want   Holding
	}{
		{[]uint32{10}, []uint64{5}, Holding{PID: 10, FD: 1, Inode: 5}},
		{[]uint32{20}, []uint64{7, 6}, Holding{PID: 20, FD: 0, Inode: 6}},
		{[]uint32{30, 20}, []uint64{7}, Holding{PID: 30, FD: 0, Inode: 7}},
		{[]uint32{99, 20}, []uint64{7}, Holding{PID: 20, FD: 1, Inode: 7}},
	} {
		if h, ok, err := holder(proc, c.pids, c.inodes); !ok || err != nil || h != c.want {
			t.Errorf("holder(%v, %v) = %+v, %v, %v; want %+v", c.pids, c.inodes, h, ok, err, c.want)
		}
	}
	// Shared by 20 and 30: the lowest PID is named.
	if pid, comm, ok := ownerOf(proc, 7); !ok || pid != 20 || comm != "app20" {
		t.Errorf("ownerOf(7) = %d %q %v, want 20 app20", pid, comm, ok)
	}
	if pid, comm, ok := ownerOf(proc, 5); !ok || pid != 10 || comm != "app10" {
		t.Errorf("ownerOf(5) = %d %q %v, want 10 app10", pid, comm, ok)
	}
	if _, _, ok := ownerOf(proc, 8); ok {
		t.Error("ownerOf(8): nobody holds it")
	}
}
