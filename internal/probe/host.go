package probe

import (
	"net/netip"
	"path"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/preload"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/sysd"
)

// RuntimeOf is the runtime an instance runs ("node", "bun"), from the
// ExecStart= the generator wrote (bm2-probe run <runtime> ...); "" when
// it is not one of bm2's.
func RuntimeOf(st sysd.Status) string {
	if len(st.ExecStart) >= 3 && st.ExecStart[1] == "run" {
		return st.ExecStart[2]
	}
	return ""
}

// Preloaded tells whether an instance runs with bm2's reusePort preload:
// its ExecStart= loads it (`node --require .../reuseport.cjs`, `bun
// --preload ...`), as the generator writes for reuseport = "preload".
func Preloaded(st sysd.Status) bool {
	for i := 0; i+1 < len(st.ExecStart); i++ {
		if w := st.ExecStart[i]; (w == preload.Flag(config.Node) || w == preload.Flag(config.Bun)) && path.Base(st.ExecStart[i+1]) == preload.FileName {
			return true
		}
	}
	return false
}

// OwnsListener tells whether the instance's processes hold one of the
// listening sockets. Their /proc/<pid>/fd is read as the instance's user
// (fsuid), which the kernel asks for: the probe has no CAP_SYS_PTRACE.
func OwnsListener(id identity.Identity, st sysd.Status, inodes []uint64) (bool, error) {
	var owns bool
	err := identity.Do(id, func() error {
		var err error
		owns, err = sockdiag.Holds(st.PIDs(), inodes)
		return err
	})
	return owns, err
}

// DiagListeners is [Probe.Listeners] over sock_diag (diag): the inodes of
// the listeners on port that uid owns.
func DiagListeners(diag *sockdiag.Conn) func(port int, uid uint32) ([]uint64, error) {
	return func(port int, uid uint32) ([]uint64, error) {
		ls, err := diag.Listeners(port)
		var inodes []uint64
		for _, l := range ls {
			if l.UID == uid {
				inodes = append(inodes, l.Inode)
			}
		}
		return inodes, err
	}
}

// DiagAddrs is [Probe.Addrs] over sock_diag (diag): the addresses of the
// listeners on port that uid owns.
func DiagAddrs(diag *sockdiag.Conn) func(port int, uid uint32) ([]netip.Addr, error) {
	return func(port int, uid uint32) ([]netip.Addr, error) {
		ls, err := diag.Listeners(port)
		var addrs []netip.Addr
		for _, l := range ls {
			if l.UID == uid {
				addrs = append(addrs, l.Addr)
			}
		}
		return addrs, err
	}
}
