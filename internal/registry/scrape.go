package registry

import (
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
)

// MetricsSocket is the scrape endpoint of bm2 metrics, in both scopes
// (units/static and units/user): its first connection starts
// bm2-metrics.service, which answers scrapes until it is idle.
const MetricsSocket = "bm2-metrics.socket"

// The scrape endpoints' ports as shipped: the system's socket listens on
// 127.0.0.1:9615 and a user's on 127.0.0.1:9616, unless a drop-in moves
// them.
const (
	MetricsPort     = 9615
	UserMetricsPort = 9616
)

// ScrapePorts are the scrape endpoints' ports, as projects that hold
// them, for CheckConflict's reserved: the scope's own socket's (user:
// the user's), its ListenStream= as listen says when known (from file,
// its unit file), else its shipped port; and the other scope's shipped
// port.
func ScrapePorts(user bool, listen []string, known bool, file string) []*config.Project {
	own, other := MetricsPort, UserMetricsPort
	if user {
		own, other = UserMetricsPort, MetricsPort
	}
	if file == "" {
		file = "the shipped " + MetricsSocket
	}
	ports := []int{own}
	if known {
		ports = ListenPorts(listen)
	}
	if !slices.Contains(ports, other) {
		ports = append(ports, other)
	}
	var out []*config.Project
	for _, port := range ports {
		out = append(out, &config.Project{Name: MetricsSocket, File: file, Port: port, Instances: 1, Mode: config.Fork})
	}
	return out
}

// ListenPorts are the TCP ports of a socket unit's Listen property
// ("Stream 127.0.0.1:9615", "Stream [::1]:9615", "Stream 9615"), in
// order, once each. Unix sockets, datagram and other listeners have none.
func ListenPorts(listen []string) []int {
	var out []int
	for _, l := range listen {
		kind, addr, ok := strings.Cut(l, " ")
		if !ok || kind != "Stream" || strings.HasPrefix(addr, "/") || strings.HasPrefix(addr, "@") {
			continue
		}
		p := addr
		if _, port, err := net.SplitHostPort(addr); err == nil {
			p = port
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || slices.Contains(out, n) {
			continue
		}
		out = append(out, n)
	}
	return out
}
