package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
)

// securityUnits are the units the security figure scores, with the row
// each is shown as.
var securityUnits = []struct{ variant, unit string }{
	{"bm2@<name>-0 of a default Node.js project", "bm2@secdef-0.service"},
	{"the same with user = a static account", "bm2@secuser-0.service"},
	{"bm2-probe@<name>-0 (root)", "bm2-probe@secdef-0.service"},
	{"bm2-failed@<name>-0 (root)", "bm2-failed@secdef-0.service"},
	{"bm2-notify.service (root, no capability, own user namespace)", "bm2-notify.service"},
	{"bm2-events.service (root, no capability, own user namespace, AF_UNIX only)", "bm2-events.service"},
	{"bm2-steer@<name>-0 (root, CAP_BPF CAP_SYS_PTRACE CAP_DAC_READ_SEARCH)", "bm2-steer@secdef-0.service"},
}

// security scores the units of two running projects (secdef: the
// defaults; secuser: user = benchapp, a static account) with
// systemd-analyze security.
func (r *runner) security(ctx context.Context) error {
	b := r.bm2
	account := "id benchapp >/dev/null 2>&1 || useradd -m -s /bin/sh benchapp"
	serve := "cd /srv/secdef && bm2 serve >/dev/null && cd /srv/secuser && bm2 serve >/dev/null && " + probesDone
	r.record("security", account, serve)
	for _, u := range securityUnits {
		r.record("security", "systemd-analyze security --no-pager "+u.unit+" | tail -1")
	}
	if out, err := b.sh(ctx, account+" && "+serve); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	for _, u := range securityUnits {
		out, err := b.sh(ctx, "systemd-analyze security --no-pager "+u.unit+" | tail -1")
		if err != nil {
			return fmt.Errorf("systemd-analyze security %s: %w\n%s", u.unit, err, out)
		}
		v, err := exposure(out)
		if err != nil {
			return fmt.Errorf("%s: %w", u.unit, err)
		}
		r.sample("security", u.variant, "exposure level", 0, v)
		r.logf("security %-62s %.1f", u.variant, v)
	}
	b.sh(ctx, "bm2 delete secdef >/dev/null; bm2 delete secuser >/dev/null")
	return nil
}

var exposureLine = regexp.MustCompile(`exposure level for \S+: ([0-9.]+)`)

// exposure reads the level out of systemd-analyze security's last line
// ("→ Overall exposure level for bm2@api-0.service: 1.2 OK 🙂").
func exposure(line string) (float64, error) {
	m := exposureLine.FindStringSubmatch(line)
	if m == nil {
		return 0, fmt.Errorf("no exposure level in %q", line)
	}
	return strconv.ParseFloat(m[1], 64)
}
