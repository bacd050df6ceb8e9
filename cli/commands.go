package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// runner runs a command once its flags are parsed.
type runner func(ctx context.Context, a *App, args []string) error

// command is one bm2 subcommand.
type command struct {
	name    string
	aliases []string
	usage   string // arguments, e.g. "[dir]"
	short   string // one line for the command list
	long    string // the description in --help
	example string
	minArgs int
	maxArgs int // -1: any number
	hidden  bool
	// setup defines the command's flags on fs and returns the runner that
	// reads them.
	setup func(fs *pflag.FlagSet) runner
}

const defaultTimeout = 60 * time.Second

// commands is the command table, in the order --help lists it.
func commands() []*command {
	return []*command{
		{
			name: "check", usage: "[dir | file | name]", maxArgs: 1,
			short: "validate a project file and report its ports and runtime",
			long: `Validates a project file without changing anything, then reports what
would happen if it ran: the notification target, whether every port of the
project's range is free, held by a shared (reusePort) listener that
instances can join, or held by an exclusive listener, and which runtime
binary systemd would start, with its version.

The argument is a project dir (meaning <dir>/bm2.toml), a file, or the name
of a registered project; the default is ./bm2.toml. In a project dir's
bm2.toml, "name" is required and "cwd" defaults to the dir, as with
bm2 serve. The project's range is also checked against every registered
project.

check needs neither root nor systemd. It exits 3 when it finds a problem:
an invalid file, a port conflict, a runtime that is missing or older than
its floor (Bun 1.4.0, Node.js 24.0.0), or a port held exclusively by
something other than the project's own running instances.`,
			example: "cd /srv/api && bm2 check\nbm2 check /etc/bm2/api.toml",
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.check(ctx, args) }
			},
		},
		{
			name: "serve", usage: "[dir]", maxArgs: 1,
			short: "register the project in dir/bm2.toml and start it",
			long: `Registers (or re-registers) the project described by <dir>/bm2.toml
(default: the current directory) and starts it.

serve fills in "cwd" (the dir) and "runtime_path" (the runtime found on
systemd's search path) when the file leaves them out, validates the result,
refuses a port range that overlaps a registered project, and writes
/etc/bm2/<name>.toml, only if its content changed. Then it clears an errored
state, reloads systemd, resets failed instances and starts bm2-<name>.target
(if it was running and the file changed, it restarts the instances one at
a time, as reload does), and shows each instance as it comes online and,
in cluster mode, as the reusePort probe
confirms it ("api-0 confirmed (reusePort)"). It fails, naming the instance,
its result and its last log lines, when an instance fails or --timeout
passes; when the probe finds the port held without reusePort, it says so:
the project is then errored (reuseport_missing) until the app is fixed
and serve runs again.

Running serve again without changes changes nothing. Needs root.

Exit codes: 0 every instance online (and confirmed); 1 an instance failed,
the project became errored, or the timeout passed; 3 invalid bm2.toml, a
port conflict or an unusable runtime (nothing was written); 5 systemd not
reachable (nothing was written).`,
			example: "cd /srv/api && sudo bm2 serve\nsudo bm2 serve --timeout 2m /srv/api",
			setup: func(fs *pflag.FlagSet) runner {
				timeout := fs.Duration("timeout", defaultTimeout, "how long to wait for every instance to come online and be confirmed")
				return func(ctx context.Context, a *App, args []string) error { return a.serve(ctx, args, *timeout) }
			},
		},
		{
			name: "list", aliases: []string{"ls"}, usage: "[name...]", maxArgs: -1,
			short: "show every instance of every registered project",
			long: `Shows one row per instance of every registered project (or of the named
ones): project, instance id, exec mode, state (online, launching, waiting
restart, stopping, stopped, errored), the reason of an errored or
restarting instance, pid, port, automatic restarts, uptime, memory and
cumulative CPU time.

A project file that does not parse shows as one row in state "invalid".
When systemd cannot be reached, states are "unknown".

REUSEPORT is the reusePort probe's verdict on an online cluster-mode
instance's current run: confirmed (it shares the port), pending (no
verdict yet), no_listener (nobody listened within 60 s), or missing (the
project was stopped because the port was held exclusively); "-" in fork
mode, for instances that are not running, and when the journal cannot be
read (as a user outside the adm group).

--json prints an array of objects with stable keys for scripts: project,
id, unit, mode, state, reason, pid, port, reuseport (null when "-"),
restarts, uptime_ms, memory_bytes (null when unknown), cpu_ms (null when
unknown).`,
			example: "bm2 list\nbm2 ls api\nbm2 list --json | jq '.[] | select(.state != \"online\")'",
			setup: func(fs *pflag.FlagSet) runner {
				asJSON := fs.Bool("json", false, "print JSON instead of a table")
				return func(ctx context.Context, a *App, args []string) error { return a.list(ctx, args, *asJSON) }
			},
		},
		{
			name: "start", usage: "<name | name-i>", minArgs: 1, maxArgs: 1,
			short: "start a project (or one instance), clearing an errored state",
			long: `Starts every instance of a registered project (bm2-<name>.target), or
one instance given as <name>-<i> (bm2@<name>-<i>.service), and waits until
it is online. Clears the project's errored state and resets failed
instances first, so this is also how a project stopped by bm2 (for
example for reuseport_missing) is brought back. In cluster mode it also
waits for the reusePort probe to confirm each instance. Needs root.`,
			example: "sudo bm2 start api\nsudo bm2 start api-2",
			setup: func(fs *pflag.FlagSet) runner {
				timeout := fs.Duration("timeout", defaultTimeout, "how long to wait for the instances to come online")
				return func(ctx context.Context, a *App, args []string) error {
					return a.control(ctx, "start", args[0], *timeout)
				}
			},
		},
		{
			name: "stop", usage: "<name | name-i>", minArgs: 1, maxArgs: 1,
			short: "stop a project (or one instance)",
			long: `Stops every instance of a registered project, or one instance given as
<name>-<i>: SIGTERM, then SIGKILL after stop_timeout_ms. The project stays
registered (and starts again at boot); bm2 delete unregisters it. Needs
root.`,
			example: "sudo bm2 stop api\nsudo bm2 stop api-2",
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error {
					return a.control(ctx, "stop", args[0], 0)
				}
			},
		},
		{
			name: "restart", usage: "<name | name-i>", minArgs: 1, maxArgs: 1,
			short: "restart a project (or one instance)",
			long: `Restarts every instance of a registered project at once, or one instance
given as <name>-<i>, and waits until it is online again (and, in cluster
mode, confirmed). All at once means the port has no listener for a moment:
bm2 reload restarts one instance at a time and drops nothing. Needs root.`,
			example: "sudo bm2 restart api\nsudo bm2 restart api-0",
			setup: func(fs *pflag.FlagSet) runner {
				timeout := fs.Duration("timeout", defaultTimeout, "how long to wait for the instances to come online")
				return func(ctx context.Context, a *App, args []string) error {
					return a.control(ctx, "restart", args[0], *timeout)
				}
			},
		},
		{
			name: "reload", usage: "<name | name-i>", minArgs: 1, maxArgs: 1,
			short: "restart a project one instance at a time, dropping no request",
			long: `A rolling restart: restarts the instances of a registered project one at
a time (after deploying new code, say), each only when the one before is
back: online (running for min_uptime_ms), listening on its port again
(when its previous run did; seen in /proc), and in cluster mode confirmed
by the reusePort probe (a new reuseport_confirmed event for its new run).
It shows each step:

  api-0 restarting… online, listening, confirmed (1.2s)

In cluster mode the other instances keep the port meanwhile, and the
kernel hands new connections to them. For no request to fail, the app
must stop accepting and finish what it has on SIGTERM — in Node.js,
process.on("SIGTERM", () => server.close()); see "Reloading without
dropping requests" in the README for keep-alive connections — and
net.ipv4.tcp_migrate_req must be 1 (bm2 installs
/usr/lib/sysctl.d/50-bm2.conf), so that connections still queued on the
closing listener move to another instance instead of being reset. A
project with one instance has no other listener: use instances >= 2. In
fork mode each instance has its own port, so the gateway must retry
another instance meanwhile (nginx: proxy_next_upstream).

If the project file changed since systemd read it, systemd is reloaded
first. The first instance that does not come back stops the reload, naming
it, its result and its last log lines; the instances not reached yet keep
running the previous version. Needs root.

Exit codes: 0 every instance back; 1 an instance did not come back or
--timeout passed (per instance), or the project is errored or not
running; 3 invalid project file; 4 no such project; 5 systemd not
reachable.`,
			example: "sudo bm2 reload api\nsudo bm2 reload api-2\nsudo bm2 reload --timeout 2m api",
			setup: func(fs *pflag.FlagSet) runner {
				timeout := fs.Duration("timeout", defaultTimeout, "how long to wait for each instance to come back")
				return func(ctx context.Context, a *App, args []string) error { return a.reload(ctx, args[0], *timeout) }
			},
		},
		{
			name: "logs", usage: "<name | name-i>", minArgs: 1, maxArgs: 1,
			short: "show the app's output (from the journal)",
			long: `Shows what the instances of a project (or one instance, given as
<name>-<i>) wrote to stdout and stderr, and what systemd said about them,
from the journal: journalctl -u bm2@<name>-<i>.service for each instance,
oldest first. Each line starts with its time and instance:

  2026-11-30 04:00:00 api-0 | listening on 3000

-n shows only the last N lines (all: every line; 0: none, with -f only
new ones), -f keeps printing new lines until interrupted, --since takes
any time journalctl understands ("10 min ago", "today",
"2026-11-30 04:00").

Reading other users' logs needs root or membership of the adm or
systemd-journal group.

Exit codes: 0 ok (also when there are no lines; it says so on stderr);
1 journalctl failed, or the journal cannot be read by this user; 2 bad
-n; 3 invalid project file; 4 no such project.`,
			example: "bm2 logs api\nbm2 logs api-2 -n 100\nbm2 logs api -f\nbm2 logs api --since '1 hour ago' -n all",
			setup: func(fs *pflag.FlagSet) runner {
				follow := fs.BoolP("follow", "f", false, "keep printing new lines")
				lines := fs.StringP("lines", "n", defaultLines, "show the last `N` lines, or all")
				since := fs.String("since", "", "show lines since `TIME` (journalctl --since)")
				return func(ctx context.Context, a *App, args []string) error {
					return a.logs(ctx, args[0], *follow, *lines, *since)
				}
			},
		},
		{
			name: "events", usage: "[name | name-i]", maxArgs: 1,
			short: "show bm2's own events (from the journal)",
			long: `Shows bm2's events from the journal (journalctl -t bm2): for every
project, one project, or one instance given as <name>-<i>. Events are
reuseport_confirmed, reuseport_missing, reuseport_probe_stopped,
instance_crashed, instance_errored, runtime_rejected and project_stopped;
without a name the generator's messages (a project file it skipped, a
port conflict) show too. One line per event, oldest first:

  TIME                 PROJECT     INSTANCE      EVENT                    REASON             MESSAGE

--json prints one JSON object per line instead, with stable keys (null
when absent): time (RFC 3339, UTC), event, project, instance, reason,
level (info, warning, error), message, detail, message_id (journald's
MESSAGE_ID, fixed per event type).

-n shows only the last N events (all: every one; 0: none, with -f only
new ones), -f keeps printing new ones until interrupted, --since takes
any time journalctl understands. Events of a deleted project stay in the
journal and can still be shown.

Exit codes: 0 ok (also when there are none; it says so on stderr); 1
journalctl failed, or the journal cannot be read by this user; 2 bad
arguments.`,
			example: "bm2 events\nbm2 events api -n 50\nbm2 events api --json | jq 'select(.level == \"error\")'\nbm2 events -f",
			setup: func(fs *pflag.FlagSet) runner {
				follow := fs.BoolP("follow", "f", false, "keep printing new events")
				asJSON := fs.Bool("json", false, "print one JSON object per event")
				lines := fs.StringP("lines", "n", defaultLines, "show the last `N` events, or all")
				since := fs.String("since", "", "show events since `TIME` (journalctl --since)")
				return func(ctx context.Context, a *App, args []string) error {
					return a.eventsCmd(ctx, args, *follow, *asJSON, *lines, *since)
				}
			},
		},
		{
			name: "status", usage: "<name>", minArgs: 1, maxArgs: 1,
			short: "show one project: its file, settings and instances",
			long: `Shows a registered project: where its file is, what it runs, whether it
is errored and why, and one line per instance, with the systemctl and
journalctl commands that show more.`,
			example: "bm2 status api",
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.status(ctx, args[0]) }
			},
		},
		{
			name: "delete", aliases: []string{"rm"}, usage: "<name>", minArgs: 1, maxArgs: 1,
			short: "stop a project and unregister it",
			long: `Stops every instance of a project, removes /etc/bm2/<name>.toml, clears
its errored state and reloads systemd, so that no unit of the project is
left. A project whose file lives elsewhere on the search path (shipped by a
package in /usr/lib/bm2, say) is refused: bm2 only removes what bm2 serve
wrote. The app's own directory is not touched. Needs root.`,
			example: "sudo bm2 delete api",
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.delete(ctx, args[0]) }
			},
		},
		{
			name: "migrate", maxArgs: 0,
			short: "keep a bm2 0.1 host's projects running as they did (the package runs it)",
			long: `Makes the projects of a host that ran bm2 0.1 keep running exactly as they
did: every project file in /etc/bm2 that names no user gets user = "bm2"
(0.1 ran every project as the account bm2, and their files are bm2's) and
[sandbox] mode = "compat" (0.1's sandbox); [env] and the webhook move to
/etc/bm2/private/<name>.toml, which only root can read. The files are
rewritten in bm2 serve's form; each original is kept, readable by root only,
in /var/lib/bm2/migrated-0.1/. Files that already name their user and keep
no secret are left alone, so running it again changes nothing.

The Debian package runs it when it upgrades from 0.1; after sudo make
install over 0.1, run it once. Running instances keep their old settings
until they restart: bm2 status says so, and bm2 reload <name> applies the
new ones. Needs root.`,
			example: "sudo bm2 migrate --dry-run\nsudo bm2 migrate",
			setup: func(fs *pflag.FlagSet) runner {
				dry := fs.Bool("dry-run", false, "say what would change, change nothing")
				return func(ctx context.Context, a *App, args []string) error { return a.migrate(ctx, *dry) }
			},
		},
		{
			name: "version", maxArgs: 0,
			short:   "print bm2's version",
			long:    `Prints the version of bm2 and of the Go toolchain that built it.`,
			example: "bm2 version",
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.version() }
			},
		},
		{
			name: "help", usage: "[command]", maxArgs: 1,
			short:   "show help for bm2 or one command",
			long:    `Shows the list of commands, or the usage, description and an example of one command.`,
			example: "bm2 help serve",
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error {
					if len(args) == 0 {
						a.mainHelp(a.Out)
						return nil
					}
					c := lookup(args[0])
					if c == nil {
						return usageErr("", "unknown command %q", args[0])
					}
					a.commandHelp(a.Out, c, newFlagSet(c))
					return nil
				}
			},
		},
	}
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
		for _, al := range c.aliases {
			if al == name {
				return c
			}
		}
	}
	return nil
}

func newFlagSet(c *command) *pflag.FlagSet {
	fs := pflag.NewFlagSet("bm2 "+c.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// dispatch parses the command line and runs the command.
func (a *App) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		a.mainHelp(a.Err)
		return usageErr("", "no command given")
	}
	switch args[0] {
	case "-h", "--help":
		a.mainHelp(a.Out)
		return nil
	case "-V", "--version":
		return a.version()
	}
	if strings.HasPrefix(args[0], "-") {
		return usageErr("", "unknown flag %q before the command", args[0])
	}
	c := lookup(args[0])
	if c == nil {
		return usageErr("", "unknown command %q", args[0])
	}
	fs := newFlagSet(c)
	run := c.setup(fs)
	fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			a.commandHelp(a.Out, c, fs)
			return nil
		}
		return usageErr(c.name, "%s: %v", c.name, err)
	}
	if h, _ := fs.GetBool("help"); h {
		a.commandHelp(a.Out, c, fs)
		return nil
	}
	rest := fs.Args()
	switch {
	case len(rest) < c.minArgs:
		return usageErr(c.name, "%s: missing argument: usage: bm2 %s %s", c.name, c.name, c.usage)
	case c.maxArgs >= 0 && len(rest) > c.maxArgs:
		return usageErr(c.name, "%s: too many arguments (%s): usage: bm2 %s %s",
			c.name, strings.Join(rest[c.maxArgs:], " "), c.name, strings.TrimSpace(c.usage))
	}
	return run(ctx, a, rest)
}

func (a *App) mainHelp(w io.Writer) {
	fmt.Fprint(w, `bm2 runs Node.js and Bun web services as N instances under systemd.

Usage: bm2 <command> [flags] [arguments]

Commands:
`)
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		name := c.name
		if len(c.aliases) > 0 {
			name += " (" + strings.Join(c.aliases, ", ") + ")"
		}
		fmt.Fprintf(w, "  %-14s %s\n", name, c.short)
	}
	fmt.Fprint(w, `
Projects are TOML files, one per project, in /etc/bm2 (see bm2.toml(5));
systemd supervises the instances (bm2@<name>-<i>.service), and there is no
bm2 daemon. Run "bm2 <command> --help" for a command's flags and an example.

Exit codes: 0 ok, 1 failure, 2 usage error, 3 invalid project file or a
problem found by check, 4 no such project, 5 systemd not reachable.
`)
}

func (a *App) commandHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	if fs.Lookup("help") == nil {
		fs.BoolP("help", "h", false, "show this help")
	}
	usage := "bm2 " + c.name
	if fs.HasAvailableFlags() {
		usage += " [flags]"
	}
	if c.usage != "" {
		usage += " " + c.usage
	}
	fmt.Fprintf(w, "Usage: %s\n", usage)
	if len(c.aliases) > 0 {
		fmt.Fprintf(w, "Aliases: %s\n", strings.Join(c.aliases, ", "))
	}
	fmt.Fprintf(w, "\n%s\n\nFlags:\n%s", c.long, flagUsages(fs))
	if c.example != "" {
		fmt.Fprintf(w, "\nExample:\n")
		for _, line := range strings.Split(c.example, "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
}

// flagUsages lists flags like pflag does, without its "[=true|false]" on
// boolean flags.
func flagUsages(fs *pflag.FlagSet) string {
	var left, right []string
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		l := "      --" + f.Name
		if f.Shorthand != "" {
			l = "  -" + f.Shorthand + ", --" + f.Name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" && f.Value.Type() != "bool" {
			l += " " + varname
		}
		switch f.Value.Type() {
		case "bool":
			if f.DefValue == "true" {
				usage += " (default true)"
			}
		case "string":
			if f.DefValue != "" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			}
		default:
			if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "[]" {
				usage += " (default " + f.DefValue + ")"
			}
		}
		left = append(left, l)
		right = append(right, usage)
		width = max(width, len(l))
	})
	var b strings.Builder
	for i := range left {
		fmt.Fprintf(&b, "%-*s   %s\n", width, left[i], right[i])
	}
	return b.String()
}
