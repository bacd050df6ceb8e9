package trust

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
)

// table is a user and group database: root, alice (in docker) and bob.
type table struct {
	users  []Account
	groups []Group
	member map[string][]int // user -> supplementary gids
}

var db = table{
	users: []Account{{"root", 0, 0}, {"alice", 1000, 1000}, {"bob", 1001, 1001}},
	groups: []Group{{Name: "root", GID: 0}, {Name: "shadow", GID: 42}, {Name: "docker", GID: 999, Members: []string{"alice"}},
		{Name: "alice", GID: 1000}, {Name: "bob", GID: 1001}},
	member: map[string][]int{"alice": {999}},
}

func (t table) User(name string) (Account, error) {
	for _, u := range t.users {
		if u.Name == name || strconv.Itoa(u.UID) == name {
			return u, nil
		}
	}
	return Account{}, fmt.Errorf("no such user %q in the user database", name)
}

func (t table) UserID(uid int) (Account, error) { return t.User(strconv.Itoa(uid)) }

func (t table) Group(name string) (Group, error) {
	for _, g := range t.groups {
		if g.Name == name || strconv.Itoa(g.GID) == name {
			return g, nil
		}
	}
	return Group{}, fmt.Errorf("no such group %q in the group database", name)
}

func (t table) GroupID(gid int) (Group, error) { return t.Group(strconv.Itoa(gid)) }

func (t table) GroupIDs(a Account) ([]int, error) {
	return append([]int{a.GID}, t.member[a.Name]...), nil
}

// units is the host's unit file states.
var unitStates = map[string]string{
	"postgresql.service": "enabled",
	"redis.service":      "enabled-runtime",
	"data.mount":         "generated",
	"poweroff.target":    "static",
	"nginx.service":      "disabled",
}

func unitState(u string) (string, error) {
	if u == "broken.service" {
		return "", errors.New("systemd is not reachable")
	}
	return unitStates[u], nil
}

const alice, bob = 1000, 1001

// TestPolicy is every rule of the policy: what a file may ask of root
// depends on who speaks for it.
func TestPolicy(t *testing.T) {
	for _, c := range []struct {
		name    string
		uid     int    // the speaker
		toml    string // after name, script and port
		refused []string
		after   []string
	}{
		// Root's own file keeps today's freedom.
		{name: "root: any account", uid: 0, toml: `user = "root"
group = "shadow"
wants = ["poweroff.target"]
[sandbox]
mode = "compat"`},
		{name: "root: privileged port", uid: 0, toml: "", refused: nil},

		// user
		{name: "own account", uid: alice},
		{name: "owner by name", uid: alice, toml: `user = "alice"`},
		{name: "owner by number", uid: alice, toml: `user = "1000"`},
		{name: "user root", uid: alice, toml: `user = "root"`, refused: []string{`user: "root" is root`}},
		{name: "user 0", uid: alice, toml: `user = "0"`, refused: []string{`user: "0" is root`}},
		{name: "another user", uid: alice, toml: `user = "bob"`, refused: []string{`user: "bob" is another user (uid 1001)`}},
		{name: "unknown user", uid: alice, toml: `user = "carol"`, refused: []string{`user: "carol": no such user`}},
		{name: "bob's file as bob", uid: bob, toml: `user = "bob"`},
		{name: "bob's file as alice", uid: bob, toml: `user = "alice"`, refused: []string{`user: "alice" is another user (uid 1000)`}},

		// group
		{name: "owner's primary group", uid: alice, toml: "user = \"alice\"\ngroup = \"alice\""},
		{name: "owner's supplementary group", uid: alice, toml: "user = \"alice\"\ngroup = \"docker\""},
		{name: "own account in owner's group", uid: alice, toml: `group = "docker"`},
		{name: "group shadow", uid: alice, toml: "user = \"alice\"\ngroup = \"shadow\"", refused: []string{`group: "shadow" (gid 42): alice is not in it`}},
		{name: "group root", uid: alice, toml: `group = "root"`, refused: []string{`group: "root" (gid 0): alice is not in it`}},
		{name: "group by number", uid: alice, toml: `group = "42"`, refused: []string{`group: "42" (gid 42)`}},
		{name: "another's group", uid: alice, toml: `group = "bob"`, refused: []string{`group: "bob" (gid 1001)`}},
		{name: "unknown group", uid: alice, toml: `group = "nogroup"`, refused: []string{`group: "nogroup": no such group`}},

		// nobody: more than one user could have written it
		{name: "nobody: own account", uid: Nobody},
		{name: "nobody: user", uid: Nobody, toml: `user = "alice"`, refused: []string{`user: "alice": a file more than one user could have written (directory /srv is writable by every user (mode 0777)) may run its app only as the project's own account`}},
		{name: "nobody: group", uid: Nobody, toml: `group = "alice"`, refused: []string{`group: "alice": a file more than one user`}},

		// sandbox
		{name: "compat", uid: alice, toml: "[sandbox]\nmode = \"compat\"", refused: []string{`sandbox.mode: "compat" takes away`}},
		{name: "strict", uid: alice, toml: "[sandbox]\nmode = \"strict\""},
		{name: "writable inside cwd", uid: alice, toml: "[sandbox]\nwritable = [\".\", \"data\", \"/home/alice/app/logs\"]"},
		{name: "writable outside cwd", uid: alice, toml: "[sandbox]\nwritable = [\"data\", \"/etc\", \"/home/alice/app2\"]",
			refused: []string{`:5: sandbox.writable: "/etc" is outside the project's cwd (/home/alice/app)`, `sandbox.writable: "/home/alice/app2" is outside`}},

		// privileged ports
		{name: "port 80", uid: alice, toml: "", refused: []string{"port: 80 is a privileged port"}},
		{name: "extra 80", uid: alice, toml: "[sandbox]\nextra_ports = [9229, 80]", refused: []string{":5: sandbox.extra_ports[1]: 80 is a privileged port"}},

		// wants and requires: ordering only, after enabled units
		{name: "wants enabled", uid: alice, toml: `wants = ["postgresql.service", "data.mount"]
requires = ["redis.service"]`, after: []string{"postgresql.service", "data.mount", "redis.service"}},
		{name: "wants poweroff", uid: alice, toml: `wants = ["poweroff.target"]`, refused: []string{`wants[0]: "poweroff.target" is static, not enabled`}},
		{name: "requires disabled", uid: alice, toml: `requires = ["postgresql.service", "nginx.service"]`,
			refused: []string{`requires[1]: "nginx.service" is disabled, not enabled`}, after: []string{"postgresql.service"}},
		{name: "after a static unit", uid: alice, toml: `after = ["poweroff.target"]`, refused: []string{`after[0]: "poweroff.target" is static, not enabled`}},
		{name: "after enabled", uid: alice, toml: `after = ["postgresql.service"]`, after: []string{"postgresql.service"}},
		{name: "wants unknown unit", uid: alice, toml: `wants = ["nothere.service"]`, refused: []string{`wants[0]: "nothere.service" is not a unit file of this host`}},
		{name: "unit state unknown", uid: alice, toml: `wants = ["broken.service"]`, refused: []string{`wants[0]: "broken.service": cannot tell whether it is enabled (systemd is not reachable)`}},

		// restart_schedule: at most once a minute
		{name: "root: every second", uid: 0, toml: `restart_schedule = "*:*:*"`},
		{name: "every second", uid: alice, toml: `restart_schedule = "*:*:*"`,
			refused: []string{`/home/alice/app/bm2.toml:4: restart_schedule: "*:*:*" fires every second, and a file alice (uid 1000) wrote may have its project restarted at most once a minute (write one value for the seconds, like "*:*:00"; or, if you have read the file`}},
		{name: "every second of a minute", uid: alice, toml: `restart_schedule = "Sun 04:00:*"`, refused: []string{`restart_schedule: "Sun 04:00:*" fires every second, and a file alice (uid 1000) wrote may have its project restarted at most once a minute (write one value for the seconds, like "Sun 04:00:00";`}},
		{name: "four times a minute", uid: alice, toml: `restart_schedule = "*-*-* *:*:00/15 UTC"`, refused: []string{`restart_schedule: "*-*-* *:*:00/15 UTC" fires 4 times a minute, and a file alice (uid 1000) wrote may have its project restarted at most once a minute (write one value for the seconds, like "*-*-* *:*:00 UTC";`}},
		{name: "twice a minute", uid: alice, toml: `restart_schedule = "*:*:10,40"`, refused: []string{`"*:*:10,40" fires twice a minute, and a file alice (uid 1000) wrote may have its project restarted at most once a minute (write one value for the seconds, like "*:*:10";`}},
		{name: "nobody: every second", uid: Nobody, toml: `restart_schedule = "*:*:*"`, refused: []string{`fires every second, and a file more than one user could have written`}},
		{name: "every minute", uid: alice, toml: `restart_schedule = "*:*:00"`},
		{name: "every minute, no seconds", uid: alice, toml: `restart_schedule = "*:*"`},
		{name: "minutely", uid: alice, toml: `restart_schedule = "minutely"`},
		{name: "hourly", uid: alice, toml: `restart_schedule = "hourly"`},
		{name: "weekly at a time", uid: alice, toml: `restart_schedule = "Sun 04:00"`},
		{name: "a date", uid: alice, toml: `restart_schedule = "*-*-01"`},
		{name: "one second, every 5 minutes", uid: alice, toml: `restart_schedule = "*:00/5:30"`},

		// several at once, each with its line
		{name: "everything", uid: alice, toml: "user = \"root\"\ngroup = \"shadow\"\nwants = [\"poweroff.target\"]",
			refused: []string{`:4: user: "root" is root`, `:5: group: "shadow"`, `:6: wants[0]: "poweroff.target"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			port := 3000
			if strings.Contains(c.name, "port") {
				port = 80
			}
			file := "/home/alice/app/bm2.toml"
			data := fmt.Sprintf("name = \"api\"\nscript = \"index.js\"\nport = %d\n%s\n", port, c.toml)
			p, err := config.Parse(file, []byte(data), config.Options{Cwd: "/home/alice/app", AnyName: true})
			if err != nil {
				t.Fatal(err)
			}
			o := Origin{File: file, UID: c.uid, Lines: config.KeyLines([]byte(data))}
			if c.uid == Nobody {
				o.Why = "directory /srv is writable by every user (mode 0777)"
			}
			v := Policy{Accounts: db, UnitState: unitState}.Check(p, o)
			if len(v.Refused) != len(c.refused) {
				t.Fatalf("refused %d, want %d:\n%v", len(v.Refused), len(c.refused), v.Refused)
			}
			for i, want := range c.refused {
				got := v.Refused[i].Error()
				if !strings.Contains(got, want) || !strings.HasPrefix(got, file) || v.Refused[i].Fix == "" {
					t.Errorf("refusal %d:\n%s\nwant it to name %s and to contain %q, with a fix", i, got, file, want)
				}
				if !strings.Contains(got, "--trust-file") {
					t.Errorf("refusal %d does not offer --trust-file: %s", i, got)
				}
				if v.Refused[i].Line == 0 {
					t.Errorf("refusal %d has no line: %s", i, got)
				}
			}
			if !reflect.DeepEqual(v.After, c.after) {
				t.Errorf("after %q, want %q", v.After, c.after)
			}
		})
	}
}

func TestApplyOrdersOnly(t *testing.T) {
	p := &config.Project{Wants: []string{"postgresql.service"}, Requires: []string{"redis.service"}, After: []string{"data.mount"}}
	Apply(p, Verdict{After: []string{"postgresql.service", "redis.service", "data.mount"}})
	if p.Wants != nil || p.Requires != nil {
		t.Fatalf("wants %q requires %q: still pulled in", p.Wants, p.Requires)
	}
	if want := []string{"data.mount", "postgresql.service", "redis.service"}; !reflect.DeepEqual(p.After, want) {
		t.Fatalf("after %q, want %q", p.After, want)
	}
}

func TestRunsAs(t *testing.T) {
	for _, c := range []struct {
		user, group, want string
	}{
		{"", "", "bm2-api:bm2-api"},
		{"", "docker", "bm2-api:docker"},
		{"alice", "", "alice:alice"},
		{"1000", "", "alice:alice"},
		{"alice", "docker", "alice:docker"},
	} {
		p := &config.Project{Name: "api", User: c.user, Group: c.group}
		if got := RunsAs(p, db); got != c.want {
			t.Errorf("user %q group %q: %s, want %s", c.user, c.group, got, c.want)
		}
	}
}
