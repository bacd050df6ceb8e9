package control

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/portfence"
)

// Plural is "1 instance" or "3 instances".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// FormatUptime renders a duration the way bm2 list shows uptime: the two
// largest units, e.g. "45s", "3m12s", "2h5m", "3d4h".
func FormatUptime(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%dh", s/86400, s%86400/3600)
}

// FormatMem renders bytes with binary units, as systemctl does: "512B",
// "41.2M", "1.5G"; Unknown is "-". bm2 list, bm2 status and bm2 top show
// memory so.
func FormatMem(b uint64) string {
	if b == Unknown {
		return "-"
	}
	if b < 1024 {
		return fmt.Sprintf("%dB", b)
	}
	v := float64(b)
	for _, unit := range []string{"K", "M", "G", "T", "P"} {
		v /= 1024
		if v < 1024 || unit == "P" {
			return fmt.Sprintf("%.1f%s", v, unit)
		}
	}
	return fmt.Sprintf("%dB", b)
}

// OneLine renders an error on one line.
func OneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// securityScore asks systemd-analyze security for a unit's exposure, e.g.
// "1.2 OK".
func securityScore(ctx context.Context, unit string) (string, error) {
	return securityScoreArgs(ctx, unit)
}

var exposureRE = regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+ \S+)`)

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
