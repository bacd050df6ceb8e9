package control

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/notify"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/wording"
)

// LegacyUser is the account bm2 0.1 ran every project as.
const LegacyUser = "bm2"

// Migrate is `bm2 migrate`: [env] and the webhook of every project file in
// the config dir that every user can read move to the private part. With
// from01 (`--from-0.1`, what the package runs once when it upgrades a bm2
// 0.1 host, so that its projects keep serving exactly as they did), every
// project file that names no user also gets user = "bm2" (0.1 ran every
// project as bm2, and its files are bm2's) and [sandbox] mode = "compat"
// (0.1's sandbox: it may write where it wrote before); without it, a
// project registered since then keeps its own account. A project whose
// webhook is on loopback, or on another of this host's own addresses,
// gets [notify] allow_local = true (bm2-notify refuses them without it). The file is
// rewritten canonically; the original is kept, root's alone, in
// <state dir>/migrated-0.1/. A file with nothing to change is left alone,
// so running it again changes nothing.
func (c *Client) Migrate(ctx context.Context, dryRun, from01 bool) error {
	if c.Scope().IsUser() {
		return fail(BadArg, "run it as root: sudo bm2 migrate",
			errors.New("migrate moves the secrets of system projects (/etc/bm2); user scope keeps them in ~/.bm2/projects/private from the start"))
	}
	if !dryRun {
		// Held to the end: every file is rewritten from what was read.
		unlock, err := lockRegistry(ctx, c.Scope().Layout(), c.Report, DefaultTimeout)
		if err != nil {
			return err
		}
		defer unlock()
	}
	entries, _ := c.Projects().Entries()
	changed := 0
	var errs []error
	for _, e := range entries {
		if filepath.Dir(e.Path) != filepath.Clean(c.Layout.ConfigDir) {
			continue // not bm2's to rewrite (shipped by a package, or in /run)
		}
		if e.Project == nil {
			warn(c.Report, "%s is invalid, so it was not migrated: %s", e.Path, wording.OneLine(e.Err))
			continue
		}
		p := *e.Project
		var did []string
		if from01 && p.OwnAccount() {
			p.User = LegacyUser
			did = append(did, `user = "bm2"`)
			if p.Sandbox.Mode == config.Strict && len(p.Sandbox.Writable) == 0 {
				p.Sandbox.Mode = config.Compat
				did = append(did, `[sandbox] mode = "compat"`)
			}
		}
		if where := localURL(p.Notify.Webhook); where != "" && !p.Notify.AllowLocal {
			// bm2-notify now refuses this host (loopback, its own
			// addresses) unless root's file allows it: a project that
			// already posts there keeps doing so, when root wrote it. One
			// registered from a user's file (its source) does not get the
			// key on that user's word.
			if who := sourceNotRoots(c.ReadFile, p.Source); who != "" {
				aside(c.Report, "%s: not given [notify] allow_local: it was registered from %s, %s; "+
					"its webhook on %s stays refused (review that file, add the key, then `sudo bm2 serve --trust-file` in its directory)",
					p.File, p.Source, who, where)
			} else {
				p.Notify.AllowLocal = true
				did = append(did, "[notify] allow_local = true (its webhook is on "+where+")")
			}
		}
		if p.SecretsInFile {
			did = append(did, privateWhat(&p)+" moved to "+config.PrivatePath(p.File))
		}
		if len(did) == 0 {
			continue
		}
		changed++
		backup := filepath.Join(c.Layout.StateDir, "migrated-0.1", filepath.Base(p.File))
		if dryRun {
			say(c.Report, "would migrate %s: %s", p.File, wording.JoinWords(did))
			continue
		}
		if err := migrateOne(c.Projects(), &p, e.Path, backup); err != nil {
			errs = append(errs, err)
			continue
		}
		say(c.Report, "migrated %s: %s; the original is in %s", p.File, wording.JoinWords(did), backup)
	}
	if changed == 0 {
		say(c.Report, "nothing to migrate in %s", c.Layout.ConfigDir)
	}
	return rootHint(c.Scope().Layout(), errors.Join(errs...))
}

// migrateOne registers p, migrated, in place of file among the projects
// of s, the original kept first in backup (root's alone).
func migrateOne(s registry.Store, p *config.Project, file, backup string) error {
	orig, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(backup), 0o700); err != nil {
		return err
	}
	if err := safefs.Write(backup, orig, 0o600); err != nil {
		return err
	}
	reg, err := newRegistration(s.Layout, s.Options, p)
	if err != nil {
		return err
	}
	if err := reg.Write(); err != nil {
		return fmt.Errorf("migrate %s: %w", file, err)
	}
	return nil
}

// loopbackURL tells whether a webhook URL names a loopback host: a
// loopback address, localhost or a name under .localhost. (A name that
// only resolves to loopback is not guessed at: bm2-notify refuses it,
// and says so in notification_dropped.)
func loopbackURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}

// WebhookNote is what bm2 check adds to the webhook it shows: whether
// bm2-notify will connect to it, when its host says so without DNS (a
// literal address, localhost).
func WebhookNote(n config.Notify) string {
	u, err := url.Parse(n.Webhook)
	if err != nil {
		return ""
	}
	addr, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		if loopbackURL(n.Webhook) {
			addr = netip.MustParseAddr("127.0.0.1")
		} else {
			return ""
		}
	}
	if err := notify.CheckTarget(addr, n.AllowLocal); err != nil {
		return ": bm2-notify refuses it: " + strings.TrimPrefix(err.Error(), notify.ErrTargetRefused.Error()+": ")
	}
	if where := localURL(n.Webhook); where != "" {
		return ", on " + where + " (allow_local)"
	}
	return ""
}

// localURL says where a webhook URL names this host, "" when it does
// not: "loopback" (loopbackURL), or "this host's own address A" for a
// literal address that bm2-notify refuses only for being the host's own
// (allow_local lets it through).
func localURL(s string) string {
	if s == "" {
		return ""
	}
	if loopbackURL(s) {
		return "loopback"
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if err != nil || notify.CheckTarget(ip, true) != nil || notify.CheckTarget(ip, false) == nil {
		return ""
	}
	return "this host's own address " + ip.String()
}

// sourceNotRoots says why a project's source file is not root's word
// ("which alice could have written"), or "" when it is root's or when
// the project has no source (root wrote it into the config dir).
func sourceNotRoots(read func(path string) (trust.File, error), source string) string {
	if source == "" {
		return ""
	}
	f, err := read(source)
	switch {
	case err != nil:
		return fmt.Sprintf("which cannot be read (%v)", err)
	case f.Speaker() != 0:
		return "which root did not write"
	}
	return ""
}
