package cli

import (
	"fmt"
	"sort"
	"time"
)

// formatUptime renders a duration the way bm2 list shows uptime: the two
// largest units, e.g. "45s", "3m12s", "2h5m", "3d4h".
func formatUptime(d time.Duration) string {
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

// formatCPU renders cumulative CPU time: "0.4s", "1.3s", then like uptime
// from a minute on. Unknown is "-".
func formatCPU(nsec uint64) string {
	if nsec == Unknown {
		return "-"
	}
	d := time.Duration(nsec)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return formatUptime(d)
}

// formatMem renders bytes with binary units, as systemctl does: "512B",
// "41.2M", "1.5G". Unknown is "-".
func formatMem(b uint64) string {
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

func sortUnits(us []UnitStatus) {
	sort.Slice(us, func(i, j int) bool { return us[i].Name < us[j].Name })
}

func sortEntries(es []entry) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Name < es[j].Name })
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
