package cli

import (
	"fmt"
	"sort"
	"time"

	"github.com/bm2dev/bm2/internal/control"
)

// formatCPU renders cumulative CPU time: "0.4s", "1.3s", then like uptime
// from a minute on. control.Unknown is "-".
func formatCPU(nsec uint64) string {
	if nsec == control.Unknown {
		return "-"
	}
	d := time.Duration(nsec)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return control.FormatUptime(d)
}

// formatMem renders bytes with binary units, as systemctl does: "512B",
// "41.2M", "1.5G". control.Unknown is "-".
func formatMem(b uint64) string {
	if b == control.Unknown {
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

func sortUnits(us []UnitStatus) {
	sort.Slice(us, func(i, j int) bool { return us[i].Name < us[j].Name })
}

func sortEntries(es []entry) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Name < es[j].Name })
}
