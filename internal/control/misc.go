package control

import (
	"time"

	"github.com/bm2dev/bm2/internal/portfence"
)

// fenceAttached is Env.FenceAttached's default: whether a bm2 port fence
// is attached to the unit's cgroup v2 cgroup (root only).
func fenceAttached(controlGroup string) (bool, error) {
	dir, err := portfence.ControlGroupDir(controlGroup)
	if err != nil {
		return false, err
	}
	return portfence.Attached(dir)
}

// DefaultTimeout is how long serve, start, restart and reload wait for
// instances unless --timeout says otherwise.
const DefaultTimeout = 60 * time.Second
