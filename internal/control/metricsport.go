package control

import (
	"context"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/scope"
)

// CheckConflict is registry.CheckConflict of p (in scope s) against the registered
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
func CheckConflict(ctx context.Context, connect func(context.Context) (Systemd, error), s scope.Scope, p *config.Project, entries []entry) error {
	return registry.CheckConflict(p, entries, func() []*config.Project { return metricsHolders(ctx, connect, s.IsUser()) })
}

// metricsHolders are the scrape endpoints' ports, as projects that hold
// them (in user scope when user; systemd reached through connect).
func metricsHolders(ctx context.Context, connect func(context.Context) (Systemd, error), user bool) []*config.Project {
	var listen []string
	known, file := false, ""
	if sd, err := connect(ctx); err == nil {
		if st, err := sd.Units(ctx, []string{registry.MetricsSocket}); err == nil && len(st) == 1 && st[0].LoadState == "loaded" {
			listen, known, file = st[0].Listen, true, st[0].FragmentPath
		}
		sd.Close()
	}
	return registry.ScrapePorts(user, listen, known, file)
}
