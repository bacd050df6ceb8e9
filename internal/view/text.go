package view

import (
	"fmt"

	"github.com/bm2dev/bm2/internal/config"
)

// ShapeText is a project's instances and ports in words: "4 x cluster on
// port 3000", "3 x fork on port 4000~4002", "2 x worker (no port)".
func ShapeText(p *config.Project) string {
	if p.IsWorker() {
		return fmt.Sprintf("%d x worker (no port)", p.Instances)
	}
	return fmt.Sprintf("%d x %s on port %s", p.Instances, p.Mode, PortText(p))
}

// PortText is a project's port, or its range of ports: "3000",
// "4000~4002".
func PortText(p *config.Project) string {
	r := p.Ports()
	if r.Lo == r.Hi {
		return fmt.Sprint(r.Lo)
	}
	return r.String()
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
