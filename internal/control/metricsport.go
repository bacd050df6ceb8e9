package control

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/registry"
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

// CheckConflict is registry.CheckConflict of p against the registered
// projects (entries, but for p's own name) and then against the scrape
// endpoints' ports, so that no project is registered on them, whether the
// socket is enabled or not: bm2 serve, bm2 scale and bm2 check refuse a
// range that overlaps one with "port conflict: api port range 9615~9615
// overlaps bm2-metrics.socket 9615~9615". The projects come first: a
// conflict among them is found without asking systemd anything.
//
// The scope's own socket's ports are read from its manager (ListenStream=
// after the admin's drop-ins, once systemd has read them); when systemd
// cannot say, the shipped port holds. The other scope's socket holds its
// shipped port: a user's project on 9615 would find it taken once root
// enables the socket, and the same for a system project on 9616.
func (c *Client) CheckConflict(ctx context.Context, p *config.Project, entries []entry) error {
	return registry.CheckConflict(p, entries, func() []*config.Project { return c.metricsHolders(ctx) })
}

// metricsHolders are the scrape endpoints' ports, as projects that hold
// them.
func (c *Client) metricsHolders(ctx context.Context) []*config.Project {
	own, other := MetricsPort, UserMetricsPort
	if c.IsUser() {
		own, other = UserMetricsPort, MetricsPort
	}
	file := "the shipped " + MetricsSocket
	ports := []int{own}
	if sd, err := c.Connect(ctx); err == nil {
		if st, err := sd.Units(ctx, []string{MetricsSocket}); err == nil && len(st) == 1 && st[0].LoadState == "loaded" {
			ports = ListenPorts(st[0].Listen)
			if st[0].FragmentPath != "" {
				file = st[0].FragmentPath
			}
		}
		sd.Close()
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
