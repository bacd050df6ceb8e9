package trust

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/units"
)

// Origin is who speaks for a project: the file it came from, as named in
// messages, and the user who could have written it.
type Origin struct {
	File string
	// UID is the speaker: 0 for root's own file (or one the operator
	// vouched for), a uid for that user's, Nobody for a file more than
	// one user could have written.
	UID int
	Why string // for Nobody: why no single user (File.Why)
	// Lines maps a key ("user", "sandbox.writable") to its line in
	// File; nil when the file is not a project file (an ecosystem file).
	Lines map[string]int
}

// OriginOf is the origin of a project file Read read, named as given.
func OriginOf(given string, f File) Origin {
	return Origin{File: given, UID: f.Speaker(), Why: f.Why(), Lines: config.KeyLines(f.Data)}
}

// Policy is what Check asks the host.
type Policy struct {
	Accounts Accounts
	// UnitState is a unit's UnitFileState as systemd reports it
	// ("enabled", "static", "disabled", ...); an error when systemd
	// cannot tell.
	UnitState func(unit string) (string, error)
}

// Refusal is one thing a file asked for that its speaker may not have.
type Refusal struct {
	File string
	Line int    // 0 when not known
	Key  string // "user", "sandbox.writable[1]", "wants[0]"
	Msg  string // what is refused and why
	Fix  string // what to change
}

func (r *Refusal) Error() string {
	var b strings.Builder
	b.WriteString(r.File)
	if r.Line > 0 {
		fmt.Fprintf(&b, ":%d", r.Line)
	}
	b.WriteString(": ")
	if r.Key != "" {
		b.WriteString(r.Key + ": ")
	}
	b.WriteString(r.Msg)
	if r.Fix != "" {
		b.WriteString(" (" + r.Fix + ")")
	}
	return b.String()
}

// Refusals is every refusal of one file, in the order of the rules.
type Refusals []*Refusal

func (rs Refusals) Error() string {
	lines := make([]string, len(rs))
	for i, r := range rs {
		lines[i] = r.Error()
	}
	return strings.Join(lines, "\n")
}

// Verdict is what Check decided.
type Verdict struct {
	Refused Refusals
	// After are the units of wants and requires the file may have the
	// app ordered after: enabled on the host, and never pulled in
	// (Apply).
	After []string
}

// OK tells whether nothing was refused.
func (v Verdict) OK() bool { return len(v.Refused) == 0 }

// Enabled are the unit file states of a unit the host starts by itself:
// ordering after one starts nothing that would not run anyway.
var Enabled = []string{"enabled", "enabled-runtime", "generated"}

// privilegedPort is the first port anyone may bind; below it the
// generator gives the app CAP_NET_BIND_SERVICE.
const privilegedPort = 1024

// Check applies the policy to a project whose file speaks for o.UID.
// Root's files (UID 0) may ask for anything. Any other file may run its
// app as its speaker or as the project's own account (no user), in a
// group the speaker is in; it may not lift the sandbox (mode = "compat"),
// open paths outside cwd for writing, bind a privileged port (port or
// [sandbox] extra_ports), pull a
// unit in: wants, requires and after may only name units enabled on the host,
// which the app is then ordered after (After=) and nothing more, or have
// root restart the project more than once a minute (restart_schedule). A
// file that speaks for Nobody may not name an account or group at all.
func (pol Policy) Check(p *config.Project, o Origin) Verdict {
	var v Verdict
	if o.UID == 0 {
		return v
	}
	c := checker{pol: pol, p: p, o: o, v: &v}
	c.who()
	c.user()
	c.group()
	c.sandbox()
	c.port()
	c.needs()
	c.schedule()
	return v
}

// Apply makes what Check let through of wants and requires ordering
// only: they go to after, and nothing is pulled in. Call it only on a
// project whose verdict is OK and whose file is not root's.
func Apply(p *config.Project, v Verdict) {
	for _, u := range v.After {
		if !slices.Contains(p.After, u) {
			p.After = append(p.After, u)
		}
	}
	p.Wants, p.Requires = nil, nil
}

type checker struct {
	pol   Policy
	p     *config.Project
	o     Origin
	v     *Verdict
	owner Account // the speaker, when o.UID > 0
	known bool    // owner was resolved
}

// TrustHint is the fix every refusal also has: the operator's word.
const TrustHint = "or, if you have read the file and mean it, run the command again with --trust-file"

func (c *checker) refuse(key, fix, format string, args ...any) {
	line := 0
	if c.o.Lines != nil {
		line = c.o.Lines[strings.SplitN(key, "[", 2)[0]]
	}
	c.v.Refused = append(c.v.Refused, &Refusal{File: c.o.File, Line: line, Key: key, Msg: fmt.Sprintf(format, args...), Fix: fix})
}

// speaker names who the file speaks for, for messages.
func (c *checker) speaker() string {
	switch {
	case c.o.UID == Nobody:
		return "no single user"
	case c.known:
		return fmt.Sprintf("%s (uid %d)", c.owner.Name, c.owner.UID)
	}
	return "uid " + strconv.Itoa(c.o.UID)
}

// wrote is "a file alice (uid 1000) wrote".
func (c *checker) wrote() string {
	if c.o.UID == Nobody {
		return "a file more than one user could have written (" + c.o.Why + ")"
	}
	return "a file " + c.speaker() + " wrote"
}

func (c *checker) who() {
	if c.o.UID > 0 && c.pol.Accounts != nil {
		if a, err := c.pol.Accounts.UserID(c.o.UID); err == nil {
			c.owner, c.known = a, true
		}
	}
}

func (c *checker) user() {
	if c.p.User == "" {
		return
	}
	fix := fmt.Sprintf("remove user, and the app runs as the project's own account (%s)", units.Account(c.p.Name))
	if c.known {
		fix += fmt.Sprintf(", or write user = %q", c.owner.Name)
	}
	fix += "; " + TrustHint
	if c.o.UID == Nobody {
		c.refuse("user", "chmod go-w what others may write, or "+fix,
			"%q: %s may run its app only as the project's own account", c.p.User, c.wrote())
		return
	}
	a, err := c.lookupUser(c.p.User)
	switch {
	case err != nil:
		c.refuse("user", fix, "%q: %v, so bm2 cannot tell that it is %s", c.p.User, err, c.speaker())
	case a.UID == c.o.UID:
		return
	case a.UID == 0:
		c.refuse("user", fix, "%q is root: %s may run its app as %s or as the project's own account, never as root", c.p.User, c.wrote(), c.speaker())
	default:
		c.refuse("user", fix, "%q is another user (uid %d): %s may run its app as %s or as the project's own account, not as someone else", c.p.User, a.UID, c.wrote(), c.speaker())
	}
}

func (c *checker) lookupUser(name string) (Account, error) {
	if c.pol.Accounts == nil {
		return Account{}, fmt.Errorf("no user database")
	}
	return c.pol.Accounts.User(name)
}

func (c *checker) group() {
	if c.p.Group == "" {
		return
	}
	fix := "remove group (the app runs in its account's primary group); " + TrustHint
	if c.o.UID == Nobody || !c.known {
		c.refuse("group", "chmod go-w what others may write, or "+fix, "%q: %s may not choose a group", c.p.Group, c.wrote())
		return
	}
	if c.pol.Accounts == nil {
		c.refuse("group", fix, "%q: no group database to check it against", c.p.Group)
		return
	}
	g, err := c.pol.Accounts.Group(c.p.Group)
	if err != nil {
		c.refuse("group", fix, "%q: %v, so bm2 cannot tell that %s is in it", c.p.Group, err, c.owner.Name)
		return
	}
	ids, err := c.pol.Accounts.GroupIDs(c.owner)
	if err != nil {
		c.refuse("group", fix, "%q: %v", c.p.Group, err)
		return
	}
	if slices.Contains(ids, g.GID) {
		return
	}
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		if gg, err := c.pol.Accounts.GroupID(id); err == nil {
			names = append(names, gg.Name)
		} else {
			names = append(names, strconv.Itoa(id))
		}
	}
	c.refuse("group", "name one of "+c.owner.Name+"'s groups ("+strings.Join(names, ", ")+"), or "+fix,
		"%q (gid %d): %s is not in it, and %s may run its app only in %s's own groups", c.p.Group, g.GID, c.owner.Name, c.wrote(), c.owner.Name)
}

func (c *checker) sandbox() {
	if c.p.Sandbox.Mode == config.Compat {
		c.refuse("sandbox.mode", "remove mode (strict is the default) and list the paths the app writes in [sandbox] writable, inside cwd; "+TrustHint,
			"\"compat\" takes away most of the sandbox root puts around the app, and %s may not ask for that", c.wrote())
	}
	cwd := path.Clean(c.p.Cwd)
	for _, w := range c.p.Sandbox.Writable { // sorted: named by value
		w = path.Clean(w)
		if w == cwd || strings.HasPrefix(w, cwd+"/") {
			continue
		}
		c.refuse("sandbox.writable", "write a path inside "+cwd+"; "+TrustHint,
			"%q is outside the project's cwd (%s): %s may open only the project's own directory for writing", w, cwd, c.wrote())
	}
}

func (c *checker) port() {
	if r := c.p.Ports(); r.Lo > 0 && r.Lo < privilegedPort {
		c.refuse("port", fmt.Sprintf("use a port of %d or more, with a gateway in front for %d; %s", privilegedPort, r.Lo, TrustHint),
			"%d is a privileged port, which the app would bind with CAP_NET_BIND_SERVICE given by root: %s may not ask for that", r.Lo, c.wrote())
	}
	// An extra port below 1024 gets the app the same capability.
	for i, n := range c.p.Sandbox.ExtraPorts {
		if n < privilegedPort {
			c.refuse(fmt.Sprintf("sandbox.extra_ports[%d]", i), fmt.Sprintf("use a port of %d or more; %s", privilegedPort, TrustHint),
				"%d is a privileged port, which the app would bind with CAP_NET_BIND_SERVICE given by root: %s may not ask for that", n, c.wrote())
		}
	}
}

// schedule keeps root's timer from restarting a project more than once
// a minute on a user's word: bm2 reload, run by root, restarts every
// instance each time restart_schedule fires, and "*:*:*" fires every
// second. One value for the seconds is at most once a minute (config
// counts them: CalendarPerMinute).
func (c *checker) schedule() {
	s := c.p.RestartSchedule
	if s == "" {
		return
	}
	n := config.CalendarPerMinute(s)
	if n <= 1 {
		return
	}
	fires := fmt.Sprintf("fires %d times a minute", n)
	switch n {
	case 2:
		fires = "fires twice a minute"
	case 60:
		fires = "fires every second"
	}
	fix := "write one value for the seconds"
	if once := config.CalendarOncePerMinute(s); once != s {
		fix += fmt.Sprintf(", like %q", once)
	}
	c.refuse("restart_schedule", fix+"; "+TrustHint,
		"%q %s, and %s may have its project restarted at most once a minute", s, fires, c.wrote())
}

func (c *checker) needs() {
	for _, list := range []struct {
		key   string
		units []string
	}{{"wants", c.p.Wants}, {"requires", c.p.Requires}, {"after", c.p.After}} {
		for i, u := range list.units {
			key := fmt.Sprintf("%s[%d]", list.key, i)
			fix := fmt.Sprintf("remove it, or enable it first (systemctl enable %s); %s", u, TrustHint)
			if c.pol.UnitState == nil {
				c.refuse(key, fix, "%q: bm2 cannot tell whether it is enabled, and from %s, %s only orders the app after units already enabled on this host", u, c.wrote(), list.key)
				continue
			}
			state, err := c.pol.UnitState(u)
			switch {
			case err != nil:
				c.refuse(key, fix, "%q: cannot tell whether it is enabled (%v), and from %s, %s only orders the app after units already enabled on this host", u, err, c.wrote(), list.key)
			case slices.Contains(Enabled, state):
				if !slices.Contains(c.v.After, u) {
					c.v.After = append(c.v.After, u)
				}
			default:
				if state == "" {
					state = "not a unit file of this host"
				}
				c.refuse(key, fix, "%q is %s, not enabled: from %s, %s never starts a unit, it only orders the app after units already enabled on this host", u, state, c.wrote(), list.key)
			}
		}
	}
}

// RunsAs names the account and group a project's instances run as in
// system scope, "alice:alice" or "bm2-api:bm2-api".
func RunsAs(p *config.Project, acc Accounts) string {
	if p.User == "" {
		g := p.Group
		if g == "" {
			g = p.Account()
		}
		return p.Account() + ":" + g
	}
	name, group := p.User, p.Group
	if acc != nil {
		if a, err := acc.User(p.User); err == nil {
			name = a.Name
			if group == "" {
				if g, err := acc.GroupID(a.GID); err == nil {
					group = g.Name
				} else {
					group = strconv.Itoa(a.GID)
				}
			}
		}
	}
	if group == "" {
		group = "?"
	}
	return name + ":" + group
}
