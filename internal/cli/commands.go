package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/gateway"
	"github.com/bm2dev/bm2/internal/kube"
	"github.com/spf13/pflag"
)

// runner runs a command once its flags are parsed.
type runner func(ctx context.Context, a *App, args []string) error

// command is one bm2 subcommand: its name, arguments and flags. What it
// says about itself is in help.txt (see help).
type command struct {
	name    string
	aliases []string
	minArgs int
	maxArgs int // -1: any number
	// signedArgs: an argument such as "-2" is an argument (bm2 scale api
	// -2), not a flag.
	signedArgs bool
	// setup defines the command's flags on fs and returns the runner that
	// reads them.
	setup func(fs *pflag.FlagSet) runner
}

// commands is the command table, in the order --help lists it, in parts
// by what the commands act on.
func commands() []*command {
	return slices.Concat(projectCommands(), runCommands(), readCommands(), frontCommands(), hostCommands())
}

// projectCommands are the commands that make, check and register a project file.
func projectCommands() []*command {
	return []*command{
		{
			name: "init", maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				var f initFlags
				fs.StringVar(&f.name, "name", "", "the project's `NAME` (default: package.json's name, else the directory's)")
				fs.BoolVar(&f.force, "force", false, "replace a bm2.toml that is there already")
				return func(ctx context.Context, a *App, args []string) error { return a.initCmd(ctx, args, f) }
			},
		},
		{
			name: "check", maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				trustFile := fs.Bool("trust-file", false, "you have read the file: check it as root's own, without the limits of a file root did not write")
				return func(ctx context.Context, a *App, args []string) error { return a.check(ctx, args, *trustFile) }
			},
		},
		{
			name: "serve", maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				var f control.ServeFlags
				fs.DurationVar(&f.Timeout, "timeout", control.DefaultTimeout, "how long to wait for every instance to come online and be confirmed")
				fs.BoolVar(&f.TrustFile, "trust-file", false, "you have read the file: let a file root did not write ask for any account, group or sandbox")
				fs.BoolVar(&f.Replace, "replace", false, "take over a project name registered from another file or cwd")
				fs.BoolVar(&f.Force, "force", false, "serve even though another program holds a port of the project, or its account certainly cannot use its cwd, script or env_file")
				return func(ctx context.Context, a *App, args []string) error { return a.c.Serve(ctx, args, f) }
			},
		},
		{
			name: "import", maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				var f importFlags
				fs.StringVar(&f.env, "env", "", "use the apps' env_`NAME` over env, as pm2 start --env NAME does")
				fs.StringSliceVar(&f.only, "only", nil, "import only these apps (`APP`: a PM2 name, taken whole, spaces and all; repeat or separate with commas)")
				fs.BoolVar(&f.dryRun, "dry-run", false, "print the files and notes, write nothing")
				fs.BoolVar(&f.serve, "serve", false, "register and start every project written, as bm2 serve does")
				fs.StringVar(&f.out, "out", "", "write `DIR`/<name>.toml instead of bm2.toml in each app's directory")
				fs.BoolVar(&f.force, "force", false, "replace a bm2.toml that differs from the import")
				fs.IntVar(&f.port, "port", 0, "the app's port `N`, when the file has none or another (one app: with --only)")
				fs.StringVar(&f.mode, "mode", "", "fork: instance i on port+i, no reusePort needed (`MODE`)")
				fs.DurationVar(&f.Timeout, "timeout", control.DefaultTimeout, "with --serve: how long to wait for each project's instances")
				fs.BoolVar(&f.TrustFile, "trust-file", false, "you have read the file: let a file root did not write ask for any account or group")
				fs.BoolVar(&f.Replace, "replace", false, "with --serve: take over a project name registered from another file or cwd")
				return func(ctx context.Context, a *App, args []string) error { return a.importCmd(ctx, args, f) }
			},
		},
	}
}

// runCommands are the commands that show and change what runs.
func runCommands() []*command {
	return []*command{
		{
			name: "list", aliases: []string{"ls"}, maxArgs: -1,
			setup: func(fs *pflag.FlagSet) runner {
				asJSON := fs.Bool("json", false, "print JSON instead of a table")
				return func(ctx context.Context, a *App, args []string) error { return a.list(ctx, args, *asJSON) }
			},
		},
		{
			name: "top", aliases: []string{"monit"}, maxArgs: -1,
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.top(ctx, args) }
			},
		},
		{
			name: "start", minArgs: 1, maxArgs: -1,
			setup: func(fs *pflag.FlagSet) runner {
				var f startFlags
				fs.DurationVar(&f.timeout, "timeout", control.DefaultTimeout, "how long to wait for the instances to come online")
				fs.StringVarP(&f.instances, "instances", "i", "", "a script: `N` instances in cluster mode, or max (one per CPU), as pm2 start -i")
				fs.StringVar(&f.name, "name", "", "a script: the project's `NAME` (default: the script's file name)")
				fs.IntVar(&f.port, "port", 0, "a script: the `PORT` it listens on, given to it in PORT (default: found in the code, else none: a worker)")
				fs.StringArrayVar(&f.env, "env", nil, "a script: set `NAME=VALUE` in its [env] (repeatable); an ecosystem file: use its env_NAME")
				fs.StringSliceVar(&f.only, "only", nil, "an ecosystem file: start only these apps (`APP`)")
				fs.BoolVar(&f.force, "force", false, "a script: replace a bm2.toml beside it that differs")
				fs.BoolVar(&f.TrustFile, "trust-file", false, "an ecosystem file: you have read it: let a file root did not write ask for any account or group")
				return func(ctx context.Context, a *App, args []string) error {
					f.Timeout = f.timeout
					if at := fs.ArgsLenAtDash(); at >= 0 {
						args, f.args = args[:at], args[at:]
					}
					if len(args) == 0 {
						return usageErr("start", "start: missing argument: usage: bm2 start %s", strings.TrimSpace(help("start").usage))
					}
					return a.startCmd(ctx, args, f)
				}
			},
		},
		{
			name: "stop", minArgs: 1, maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error {
					return a.c.Control(ctx, "stop", args[0], 0)
				}
			},
		},
		{
			name: "restart", minArgs: 1, maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				timeout := fs.Duration("timeout", control.DefaultTimeout, "how long to wait for the instances to come online")
				return func(ctx context.Context, a *App, args []string) error {
					return a.c.Control(ctx, "restart", args[0], *timeout)
				}
			},
		},
		{
			name: "reload", minArgs: 1, maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				timeout := fs.Duration("timeout", control.DefaultTimeout, "how long to wait for each instance to come back")
				return func(ctx context.Context, a *App, args []string) error { return a.c.Reload(ctx, args[0], *timeout) }
			},
		},
		{
			name: "scale", minArgs: 2, maxArgs: 2, signedArgs: true,
			setup: func(fs *pflag.FlagSet) runner {
				timeout := fs.Duration("timeout", control.DefaultTimeout, "how long to wait for the new instances to come online")
				return func(ctx context.Context, a *App, args []string) error {
					return a.c.Scale(ctx, args[0], args[1], *timeout)
				}
			},
		},
	}
}

// readCommands are the commands that read what the instances did and do:
// their logs, events, state and metrics.
func readCommands() []*command {
	return []*command{
		{
			name: "logs", minArgs: 1, maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				var o logsOptions
				fs.BoolVarP(&o.follow, "follow", "f", false, "keep printing new lines")
				fs.StringVarP(&o.lines, "lines", "n", defaultLines, "show the last `N` lines, or all")
				fs.StringVar(&o.since, "since", "", "show lines since `TIME` (journalctl --since)")
				fs.StringVar(&o.grep, "grep", "", "show only lines that match `PATTERN` (journalctl --grep)")
				fs.BoolVar(&o.json, "json", false, "print one JSON object per line")
				fs.BoolVar(&o.systemd, "systemd", false, "also show systemd's own lines about the instances (Started, Main process exited, ...)")
				return func(ctx context.Context, a *App, args []string) error {
					return a.logs(ctx, args[0], o)
				}
			},
		},
		{
			name: "events", maxArgs: 1,
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
			name: "status", minArgs: 1, maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.status(ctx, args[0]) }
			},
		},
		{
			name: "metrics", maxArgs: -1,
			setup: func(fs *pflag.FlagSet) runner {
				overHTTP := fs.Bool("http", false, "answer one HTTP request on standard input, for a socket unit with Accept=yes")
				serve := fs.Bool("serve", false, "answer scrapes on the socket systemd passes (bm2-metrics.socket), until idle")
				return func(ctx context.Context, a *App, args []string) error {
					if *serve {
						if *overHTTP {
							return usageErr("metrics", "metrics: --serve and --http cannot go together: --serve is for a socket unit with Accept=no, --http for one with Accept=yes")
						}
						return a.metricsServe(ctx, args)
					}
					return a.metricsCmd(ctx, args, *overHTTP)
				}
			},
		},
	}
}

// frontCommands are the commands that write what goes in front of the
// projects: a gateway's configuration, Kubernetes objects.
func frontCommands() []*command {
	return []*command{
		{
			name: "gateway", minArgs: 1, maxArgs: -1,
			setup: func(fs *pflag.FlagSet) runner {
				names := fs.StringArray("server-name", nil, "answer for host `NAME` (repeatable; default: any host)")
				listen := fs.String("listen", gateway.DefaultListen, "listen on `PORT` or ADDR:PORT")
				hosts := fs.StringArray("host", nil, "the projects run on `ADDR`, an IP address or DNS name (repeatable: a fleet; default: 127.0.0.1)")
				prefix := fs.String("path-prefix", "", "serve every project under one server, each at its name below `PREFIX` (/ gives /api/, /apps gives /apps/api/)")
				out := fs.StringP("out", "o", "", "write the configuration to `FILE` (atomically; says unchanged when it holds the same bytes)")
				gw := fs.String("gateway", "", "httproute: attach the routes to the Gateway `NAME` (or NAMESPACE/NAME)")
				ns := fs.StringP("namespace", "n", "", "httproute: the routes' namespace `NS` (default: kubectl's)")
				return func(ctx context.Context, a *App, args []string) error {
					if args[0] == routeKind {
						for _, f := range []string{"listen", "host"} {
							if fs.Changed(f) {
								return usageErr("gateway", "gateway httproute: --%s is for nginx and caddy: an HTTPRoute is served by the Gateway's listeners, in front of the project's Service", f)
							}
						}
						return a.httpRouteCmd(args[1:], kube.Options{Gateway: *gw, Namespace: *ns, Hostnames: *names, PathPrefix: *prefix}, *out)
					}
					for _, f := range []string{"gateway", "namespace"} {
						if fs.Changed(f) {
							return usageErr("gateway", "gateway %s: --%s is for httproute", args[0], f)
						}
					}
					return a.gatewayCmd(ctx, args, gateway.Options{ServerNames: *names, Listen: *listen, Hosts: *hosts, PathPrefix: *prefix}, *out)
				}
			},
		},
		{
			name: "export", minArgs: 1, maxArgs: -1,
			setup: func(fs *pflag.FlagSet) runner {
				var f exportFlags
				fs.StringVar(&f.image, "image", "", "the container `IMAGE` that holds the app at its cwd, and its runtime (required)")
				fs.StringVarP(&f.namespace, "namespace", "n", "", "put every object in namespace `NS` (default: kubectl's)")
				fs.StringVarP(&f.out, "out", "o", "", "write `DIR`/<name>.yaml for each project (atomically) instead of printing")
				fs.BoolVar(&f.ordinal, "ordinal", false, "a StatefulSet, whose pods have numbers (BM2_APP_INSTANCE), instead of a Deployment")
				fs.StringVar(&f.gateway, "gateway", "", "add an HTTPRoute to the Gateway `NAME` (or NAMESPACE/NAME)")
				fs.StringArrayVar(&f.names, "server-name", nil, "with --gateway: answer for host `NAME` (repeatable; default: any host)")
				fs.StringVar(&f.prefix, "path-prefix", "", "with --gateway: route each project at its name below `PREFIX` (/ gives /api/)")
				fs.BoolVar(&f.secrets, "secrets", false, "with --out: write [env] into DIR/<name>.secret.yaml, a Secret (mode 0600)")
				return func(ctx context.Context, a *App, args []string) error { return a.exportCmd(ctx, args, f) }
			},
		},
	}
}

// hostCommands are the commands of bm2 itself and of the host.
func hostCommands() []*command {
	return []*command{
		{
			name: "startup", maxArgs: 0,
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.c.Startup(ctx) }
			},
		},
		{
			name: "delete", aliases: []string{"rm"}, minArgs: 1, maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.c.Delete(ctx, args[0]) }
			},
		},
		{
			name: "migrate", maxArgs: 0,
			setup: func(fs *pflag.FlagSet) runner {
				dry := fs.Bool("dry-run", false, "say what would change, change nothing")
				from01 := fs.Bool("from-0.1", false, "also keep a bm2 0.1 host's projects as they ran: user = \"bm2\", [sandbox] mode = \"compat\" (the package passes it when it upgrades from 0.1)")
				return func(ctx context.Context, a *App, args []string) error { return a.c.Migrate(ctx, *dry, *from01) }
			},
		},
		{
			name: "completion", minArgs: 1, maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.completion(args[0]) }
			},
		},
		{
			name: "version", maxArgs: 0,
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error { return a.Version() }
			},
		},
		{
			name: "help", maxArgs: 1,
			setup: func(fs *pflag.FlagSet) runner {
				return func(ctx context.Context, a *App, args []string) error {
					if len(args) == 0 {
						a.mainHelp(a.Out)
						return nil
					}
					c := lookup(args[0])
					if c == nil {
						return unknownCommand(args[0])
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
		return a.Version()
	}
	if strings.HasPrefix(args[0], "-") {
		return usageErr("", "unknown flag %q before the command", args[0])
	}
	if args[0] == completeCommand {
		// Hidden, for the completion scripts; its words are not its flags.
		return a.complete(args[1:])
	}
	c := lookup(args[0])
	if c == nil {
		return unknownCommand(args[0])
	}
	fs := newFlagSet(c)
	run := c.setup(fs)
	fs.BoolP("help", "h", false, "show this help")
	words := args[1:]
	if c.signedArgs {
		words = shieldSigned(words)
	}
	if err := fs.Parse(words); err != nil {
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
	if c.signedArgs {
		rest = unshieldSigned(rest)
	}
	switch {
	case len(rest) < c.minArgs:
		return usageErr(c.name, "%s: missing argument: usage: bm2 %s %s", c.name, c.name, help(c.name).usage)
	case c.maxArgs >= 0 && len(rest) > c.maxArgs:
		return usageErr(c.name, "%s: too many arguments (%s): usage: bm2 %s %s",
			c.name, strings.Join(rest[c.maxArgs:], " "), c.name, strings.TrimSpace(help(c.name).usage))
	}
	return ownUsage(c.name, run(ctx, a, rest))
}

// signedShield marks a word such as "-2" for the flag parser, which
// would take it for the shorthand flags -2 otherwise; no flag begins
// with it.
const signedShield = "\x00"

// shieldSigned hides the words that are negative whole numbers from the
// flag parser; unshieldSigned gives them back.
func shieldSigned(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if len(w) > 1 && w[0] == '-' && strings.Trim(w[1:], "0123456789") == "" {
			w = signedShield + w
		}
		out[i] = w
	}
	return out
}

func unshieldSigned(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strings.TrimPrefix(w, signedShield)
	}
	return out
}

func (a *App) mainHelp(w io.Writer) {
	fmt.Fprint(w, `bm2 runs Node.js and Bun web services as N instances under systemd.

Usage: bm2 <command> [flags] [arguments]

Commands:
`)
	for _, c := range commands() {
		name := c.name
		if len(c.aliases) > 0 {
			name += " (" + strings.Join(c.aliases, ", ") + ")"
		}
		fmt.Fprintf(w, "  %-14s %s\n", name, help(c.name).short)
	}
	fmt.Fprint(w, `
Projects are TOML files, one per project, in /etc/bm2 (see bm2.toml(5));
systemd supervises the instances (bm2@<name>-<i>.service), and there is no
bm2 daemon. Run "bm2 <command> --help" for a command's flags and an example.

Scope: as root bm2 manages system projects (/etc/bm2, the system's
systemd); as a normal user, that user's own (~/.bm2/projects, systemctl
--user). --system or --user, before or after the command, chooses.

Exit codes: 0 ok, 1 failure, 2 usage error, 3 invalid project file or a
problem found by check, 4 no such project, 5 systemd not reachable.
`)
}

func (a *App) commandHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	if fs.Lookup("help") == nil {
		fs.BoolP("help", "h", false, "show this help")
	}
	h := help(c.name)
	usage := "bm2 " + c.name
	if fs.HasAvailableFlags() {
		usage += " [flags]"
	}
	if h.usage != "" {
		usage += " " + h.usage
	}
	fmt.Fprintf(w, "Usage: %s\n", usage)
	if len(c.aliases) > 0 {
		fmt.Fprintf(w, "Aliases: %s\n", strings.Join(c.aliases, ", "))
	}
	fmt.Fprintf(w, "\n%s\n\nFlags:\n%s", h.long, flagUsages(fs))
	if len(h.examples) > 0 {
		fmt.Fprintf(w, "\nExample:\n")
		for _, line := range h.examples {
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
