package steer

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// Each state of a port's steering, in bm2 status's words.
func TestSteeringLine(t *testing.T) {
	dir := "/sys/fs/bpf/bm2/api"
	denied := fmt.Errorf("pin directory %s: %w", dir, fs.ErrPermission)
	for _, c := range []struct {
		v    portView
		want string
	}{
		{portView{dir: dir, pinned: true, live: 2}, "port 3000: round-robin over 2 instances (kernel-steered, /sys/fs/bpf/bm2/api)"},
		{portView{dir: dir, pinned: true, live: 1}, "port 3000: round-robin over 1 instance (kernel-steered, /sys/fs/bpf/bm2/api)"},
		{portView{dir: dir, pinned: true}, "port 3000: kernel hash (no instance in the steered turn yet, /sys/fs/bpf/bm2/api)"},
		{portView{dir: dir, openErr: fs.ErrNotExist, marked: true, why: "no_permission", about: "create the table: operation not permitted"},
			"port 3000: kernel hash (steering unavailable: no_permission: create the table: operation not permitted)"},
		{portView{dir: dir, openErr: &UnavailableError{Reason: ReasonNoBPFFS, Err: errors.New("x")}},
			"port 3000: kernel hash (steering unavailable: no_bpffs)"},
		{portView{dir: dir, openErr: fmt.Errorf("open the group: %w", fs.ErrNotExist)}, "port 3000: kernel hash (not steered yet)"},
		{portView{dir: dir, openErr: denied}, "port 3000: steering not known (run as root to see it)"},
		{portView{dir: dir, openErr: fs.ErrNotExist, markErr: fs.ErrPermission}, "port 3000: steering not known (run as root to see it)"},
		{portView{dir: dir, openErr: errors.New("odd\nerror")}, "port 3000: steering not known (odd; error)"},
	} {
		if got := steeringLine(3000, c.v); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.v, got, c.want)
		}
	}
}
