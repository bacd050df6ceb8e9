package cli

import (
	"fmt"
	"sort"
	"time"

	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
)

// formatCPU renders cumulative CPU time: "0.4s", "1.3s", then like uptime
// from a minute on. view.Unknown is "-".
func formatCPU(nsec uint64) string {
	if nsec == view.Unknown {
		return "-"
	}
	d := time.Duration(nsec)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return wording.FormatUptime(d)
}

func sortUnits(us []UnitStatus) {
	sort.Slice(us, func(i, j int) bool { return us[i].Name < us[j].Name })
}

func sortEntries(es []entry) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Name < es[j].Name })
}
