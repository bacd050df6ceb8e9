package generator

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/parallel"
	"github.com/bm2dev/bm2/internal/preload"
	"github.com/bm2dev/bm2/units"
)

// DropInName is the name of the generator's drop-in in each instance's
// bm2@<name>-<i>.service.d directory.
const DropInName = "50-bm2.conf"

// WantedBy is the target whose .wants directory enables project targets
// in system scope; in user scope it is default.target (layout.Layout).
const WantedBy = "multi-user.target"

// PrivateDir is the directory, in the generator's output, that holds each
// project's [env] as a file for EnvironmentFile=: root's alone (0700, files
// 0600), so no other user can read the values, and `systemctl show` shows
// only the path.
const PrivateDir = "bm2-private"

// Options are the facts about the host that generation depends on.
type Options struct {
	NumCPU int    // resolves instances = "max"
	Helper string // bm2-probe, which wraps the runtime in ExecStart=; DefaultHelper if ""
	OutDir string // where the output will live (EnvironmentFile= paths); the Layout's GeneratorDir if ""
	// Layout is the scope generated for; the zero value is system scope.
	Layout layout.Layout
	// MinPort is the lowest port of user scope
	// (net.ipv4.ip_unprivileged_port_start when 0).
	MinPort int
	// CLI is the bm2 command, which a project's restart schedule runs
	// (`bm2 reload <name>`); DefaultCLI if "".
	CLI string
	// SystemdVersion is the manager's version (DetectSystemdVersion):
	// restart_delay_max_ms is written from BackoffVersion on, and
	// RestartMode=direct from RestartModeVersion on. 0 means not known,
	// and is taken for the oldest systemd bm2 supports.
	SystemdVersion int
}

// user tells whether generation is for a user's manager.
func (o Options) user() bool { return o.Layout.IsUser() }

// DefaultHelper is where packages install bm2-probe.
const DefaultHelper = "/usr/lib/bm2/bm2-probe"

// DefaultCLI is where packages install the bm2 command.
const DefaultCLI = "/usr/bin/bm2"

// File is one output file, relative to the generator directory. Exactly one
// of Data and Link is meaningful: Link != "" makes a symlink. Mode is the
// file's permission bits (0644 when 0).
type File struct {
	Project string // the project it belongs to
	Path    string
	Data    []byte
	Link    string
	Mode    os.FileMode
}

// Perm is the file's mode.
func (f File) Perm() os.FileMode {
	if f.Mode == 0 {
		return 0o644
	}
	return f.Mode
}

// Diagnostic is a project file that was skipped, and why.
type Diagnostic struct {
	File string // the project file
	Err  error  // config.Errors, *config.ConflictError or another error naming the file
}

func (d Diagnostic) String() string { return strings.Join(d.Lines(), "\n") }

// Lines is the diagnostic as log lines, one per problem, each naming the
// file (and, where known, the line and key):
// "skipped api: /etc/bm2/api.toml:4: port: must be an integer, got a string".
func (d Diagnostic) Lines() []string {
	var lines []string
	for _, msg := range strings.Split(d.Err.Error(), "\n") {
		if !strings.HasPrefix(msg, d.File) && !strings.HasPrefix(msg, path.Dir(d.File)) {
			msg = d.File + ": " + msg
		}
		lines = append(lines, "skipped "+config.Stem(d.File)+": "+msg)
	}
	return lines
}

// Result is everything one generator run produces.
type Result struct {
	Files    []File            // in a fixed order: projects by name, then a fixed order per project
	Projects []*config.Project // projects generated, by name
	Skipped  []Diagnostic      // projects skipped, by name
	Warnings []string          // things that work but should be fixed
}

// Generate converts project files into unit files. Sources need not be
// sorted; output is ordered by project name.
func Generate(sources []config.Source, opts Options) Result {
	opts = opts.withDefaults()
	res := plan(sources, opts)
	// Each project's files are its own: rendered in parallel, then put
	// in project order.
	perProject := make([][]File, len(res.Projects))
	parallel.For(len(res.Projects), 8, func(i int) { perProject[i] = ProjectFiles(res.Projects[i], opts) })
	n := 0
	for _, fs := range perProject {
		n += len(fs)
	}
	if n > 0 {
		res.Files = make([]File, 0, n)
	}
	for _, fs := range perProject {
		res.Files = append(res.Files, fs...)
	}
	return res
}

func (opts Options) withDefaults() Options {
	if opts.Helper == "" {
		opts.Helper = DefaultHelper
	}
	if opts.CLI == "" {
		opts.CLI = DefaultCLI
	}
	if opts.Layout.Kind == "" {
		opts.Layout = layout.System()
	}
	if opts.OutDir == "" {
		opts.OutDir = opts.Layout.GeneratorDir
	}
	return opts
}

// plan is Generate less the files: which projects are generated, which
// are skipped and why, and the warnings. Each generated project's files
// are then ProjectFiles (opts with its defaults).
func plan(sources []config.Source, opts Options) Result {
	copts := config.Options{NumCPU: opts.NumCPU}
	if opts.user() {
		min := opts.MinPort
		if min == 0 {
			min = layout.UnprivilegedPortStart()
		}
		copts.User = &config.UserScope{Name: opts.Layout.Name, MinPort: min}
	}
	loaded := config.Resolve(sources, copts)
	var res Result
	for _, e := range loaded.Entries {
		if e.Err == nil && e.Project.PrivateUnread {
			// Generating it without its [env] or webhook would start the
			// app without its secrets.
			e.Err = fmt.Errorf("cannot read its private part %s: make it readable by the generator's user (yours in user scope: chown $USER: %s; chmod 0600 %s)",
				config.PrivatePath(e.Path), config.PrivatePath(e.Path), config.PrivatePath(e.Path))
		}
		if e.Err != nil {
			res.Skipped = append(res.Skipped, Diagnostic{File: e.Path, Err: e.Err})
			continue
		}
		res.Projects = append(res.Projects, e.Project)
	}
	for _, p := range res.Projects {
		if p.ExposedSecrets {
			res.Warnings = append(res.Warnings, p.File+" holds [env] or a webhook and every user can read it: move them to "+
				config.PrivatePath(p.File)+" (mode 0600; `bm2 migrate` does it)")
		}
	}
	return res
}

// ProjectFiles is every file generated for one valid project.
func ProjectFiles(p *config.Project, opts Options) []File {
	r := renderers.Get().(*renderer)
	defer renderers.Put(r)
	return r.files(p, opts)
}

// renderers recycles the renderers of ProjectFiles, whose files get bytes
// of their own: a thousand projects are rendered at once by Generate.
var renderers = sync.Pool{New: func() any { return new(renderer) }}

// files is ProjectFiles, rendered into r's buffer after what it holds.
func (r *renderer) files(p *config.Project, opts Options) []File {
	if opts.Layout.Kind == "" {
		opts.Layout = layout.System()
	}
	if opts.CLI == "" {
		opts.CLI = DefaultCLI
	}
	// Paths are joined as they are: names and directories are clean
	// (config.ValidName), as path.Join would leave them.
	target := units.Target(p.Name)
	files := r.fileList(11 + p.Instances) // slice, target, link, env, instances, surge, the restart schedule's three, the health check's three
	files = append(files,
		File{Path: units.Slice(p.Name), Data: sliceUnit(r, p, opts.Layout.Systemctl)},
		File{Path: target, Data: targetUnit(r, p, opts.Layout.Systemctl)},
		File{Path: opts.Layout.WantedBy + ".wants/" + target, Link: "../" + target},
	)
	shared := newInstanceShared(p, opts)
	if shared.envFile != "" {
		files = append(files, File{Path: PrivateDir + "/" + p.Name + ".env", Data: envFile(r, p), Mode: 0o600})
	}
	tmpl, ok := shared.template(r, p)
	for i := 0; i < p.Instances; i++ {
		var data []byte
		if ok {
			data = tmpl.instance(r, i, p.InstancePort(i), p.HealthPort(i))
		} else { // a placeholder byte in a path: render each one
			data = shared.dropIn(r, p, strconv.Itoa(i), strconv.Itoa(i), strconv.Itoa(p.InstancePort(i)), healthPortText(p, i))
		}
		files = append(files, File{Path: units.DropInDir(p.Name, i) + "/" + DropInName, Data: data})
	}
	if p.Mode == config.Cluster {
		// The surge: the same instance once more, on the same port, that
		// no target wants. `bm2 reload` starts it before it restarts the
		// first instance and stops it after the last, so the port never
		// has fewer listeners than the project has instances. It carries
		// BM2_APP_INSTANCE=<instances>, a number no other instance has
		// (so the "0" that runs migrations and cron is never doubled), and
		// BM2_APP_SURGE=1.
		data := shared.dropIn(r, p, units.SurgeName, strconv.Itoa(p.Instances), strconv.Itoa(p.Port), healthPortText(p, units.Surge))
		files = append(files, File{Path: units.DropInDir(p.Name, units.Surge) + "/" + DropInName, Data: data})
	}
	if p.RestartSchedule != "" {
		// The restart schedule: a timer the project's target wants (the
		// link is the generator's WantedBy=) and that is PartOf= it, so it
		// runs while the project does and stops with it, and the oneshot
		// it starts.
		timer := units.RestartTimer(p.Name)
		files = append(files,
			File{Path: timer, Data: restartTimer(r, p, opts.Layout.Systemctl)},
			File{Path: target + ".wants/" + timer, Link: "../" + timer},
			File{Path: units.RestartService(p.Name), Data: restartService(r, p, opts)},
		)
	}
	if p.HealthChecked() {
		// The health check: a timer the target wants and that is PartOf=
		// it, as the restart schedule's, and the oneshot it starts every
		// health_interval_ms.
		timer := units.HealthTimer(p.Name)
		files = append(files,
			File{Path: timer, Data: healthTimer(r, p, opts.Layout.Systemctl)},
			File{Path: target + ".wants/" + timer, Link: "../" + timer},
			File{Path: units.HealthService(p.Name), Data: healthService(r, p, opts)},
		)
	}
	if p.MemoryWatched() {
		// The memory restart: a timer the target wants and that is
		// PartOf= it, the oneshot it starts every memory_check_interval_ms,
		// and the template of the reload it starts for one instance.
		timer := units.MemoryTimer(p.Name)
		files = append(files,
			File{Path: timer, Data: memoryTimer(r, p, opts.Layout.Systemctl)},
			File{Path: units.Target(p.Name) + ".wants/" + timer, Link: "../" + timer},
			File{Path: units.MemoryService(p.Name), Data: memoryService(r, p, opts)},
			File{Path: units.ReloadTemplate(p.Name), Data: reloadTemplate(r, p, opts)},
		)
	}
	for i := range files {
		files[i].Project = p.Name
	}
	return files
}

// healthPortText is BM2_HEALTH_PORT of instance i as text, "" for a
// project without a health check.
func healthPortText(p *config.Project, i int) string {
	if !p.HealthChecked() {
		return ""
	}
	return strconv.Itoa(p.HealthPort(i))
}

// envFile is the project's [env] for EnvironmentFile=.
func envFile(r *renderer, p *config.Project) []byte {
	start := len(r.buf)
	for _, e := range p.Env {
		r.buf = append(r.buf, units.QuoteEnvFile(e.Name, e.Value)...)
	}
	return r.done(start)
}

// renderer is where a project's files are rendered: the units.File each
// unit is built in, and a buffer that takes the bytes of every file in
// turn.
//
// A shared renderer leaves each file a slice of its buffer, which reset
// empties for the next project: Run's writers keep one each, a project's
// files being written before the next is rendered (a thousand projects
// are some 9,000 files, else as many buffers for the collector).
// Otherwise each file gets bytes of its own.
type renderer struct {
	shared bool
	f      units.File
	buf    []byte
	list   []File // the files of a shared renderer
	// The header of the units last begun: of the project file file, for
	// the scope's systemctl.
	file, systemctl string
	header          [2]string
}

// reset empties the buffer for another project: the files rendered so
// far must be done with.
func (r *renderer) reset() { r.buf = r.buf[:0] }

// fileList is an empty list of files with room for n, the renderer's own
// when it is shared.
func (r *renderer) fileList(n int) []File {
	if !r.shared {
		return make([]File, 0, n)
	}
	if cap(r.list) < n {
		r.list = make([]File, 0, n)
	}
	clear(r.list[:cap(r.list)]) // nothing of the last project's kept alive
	return r.list[:0]
}

// unit begins a unit of p, with its header: the project file and how to
// apply edits to it, the scope's `systemctl [--user] daemon-reload`.
func (r *renderer) unit(p *config.Project, systemctl string) *units.File {
	if r.file != p.File || r.systemctl != systemctl || r.header[0] == "" {
		r.file, r.systemctl = p.File, systemctl
		r.header = [2]string{
			"Generated by bm2-generator from " + p.File + ".",
			"Edit that file and run `" + systemctl + " daemon-reload`; changes here are lost.",
		}
	}
	r.f.Reset()
	r.f.Comment(r.header[0])
	r.f.Comment(r.header[1])
	return &r.f
}

// bytes renders the unit begun last into the buffer.
func (r *renderer) bytes() []byte {
	start := len(r.buf)
	r.buf = r.f.AppendTo(r.buf)
	return r.done(start)
}

// done is the file that the buffer holds from start on: in place, with no
// room to grow into the next one, when the renderer is shared, else a
// copy of the exact size.
func (r *renderer) done(start int) []byte {
	if r.shared {
		return r.buf[start:len(r.buf):len(r.buf)]
	}
	b := make([]byte, len(r.buf)-start)
	copy(b, r.buf[start:])
	r.buf = r.buf[:start]
	return b
}

func sliceUnit(r *renderer, p *config.Project, systemctl string) []byte {
	f := r.unit(p, systemctl)
	f.Add("Unit", "Description", "bm2 project "+p.Name)
	f.Add("Unit", "Documentation", "man:bm2.toml(5)")
	f.Add("Unit", "SourcePath", units.Specifiers(p.File))
	f.Add("Unit", "Before", "slices.target")
	// Every task of the project together (instances, the surge, what they
	// spawn): a fork bomb in one project stops there, not at the host's
	// pid_max (bm2.toml(5), slice_tasks_max).
	f.Add("Slice", "TasksAccounting", "yes")
	f.Add("Slice", "TasksMax", strconv.Itoa(p.SliceTasksMax()))
	return r.bytes()
}

func targetUnit(r *renderer, p *config.Project, systemctl string) []byte {
	f := r.unit(p, systemctl)
	f.Add("Unit", "Description", "bm2 project "+p.Name)
	f.Add("Unit", "Documentation", "man:bm2.toml(5)")
	f.Add("Unit", "SourcePath", units.Specifiers(p.File))
	// One line per instance keeps lines short for 1024 instances. No
	// After=: starting the target only queues the instances' start jobs and
	// is done at once. Ordered after them, its job would wait through crash
	// loops, and the reusePort probe's stop of the project would cancel it
	// ("Job for bm2-api.target canceled"); bm2 serve and bm2 start wait for
	// the instances themselves.
	for i := 0; i < p.Instances; i++ {
		f.Add("Unit", "Wants", units.Instance(p.Name, i))
	}
	return r.bytes()
}

// restartTimer is bm2-<name>-restart.timer: restart_schedule as
// OnCalendar=, to the second (systemd's default accuracy is a minute),
// and no catching up after a time the host was off (Persistent=false: a
// reload at boot would only restart what has just started).
func restartTimer(r *renderer, p *config.Project, systemctl string) []byte {
	f := r.unit(p, systemctl)
	f.Add("Unit", "Description", "bm2 "+p.Name+" restart schedule")
	f.Add("Unit", "Documentation", "man:bm2.toml(5)")
	f.Add("Unit", "SourcePath", units.Specifiers(p.File))
	f.Add("Unit", "PartOf", units.Target(p.Name))
	f.Add("Timer", "OnCalendar", p.RestartSchedule) // config's calendar subset: nothing to quote
	f.Add("Timer", "AccuracySec", "1s")
	f.Add("Timer", "Persistent", "false")
	f.Add("Timer", "Unit", units.RestartService(p.Name))
	return r.bytes()
}

// restartService is bm2-<name>-restart.service, which the restart timer
// starts: `bm2 reload <name>`, the rolling reload of the command line (in
// cluster mode the surge serves beside the instances, and no request
// fails), run by the scope's manager: root's in system scope, the user's
// in user scope, as the user. A oneshot has no start timeout: the reload
// bounds each instance's wait itself.
//
// It is sandboxed as bm2's other helpers are, as far as the reload lets
// it be: it needs systemd's bus (AF_UNIX), the journal (journalctl, for
// the probe's verdicts), the project registry and bm2's state (written:
// the reload lock), and, as root, the instances' sockets (/proc/<pid>/fd
// of other users: CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, and sock_diag:
// AF_NETLINK), as bm2-metrics.service does.
func restartService(r *renderer, p *config.Project, opts Options) []byte {
	return reloadService(r, p, opts, "bm2 "+p.Name+" scheduled reload", units.QuoteCommand([]string{opts.CLI, opts.scopeFlag(), "reload", p.Name}), false)
}

// reloadTemplate is bm2-<name>-reload@.service, whose instance <i> the
// memory check starts for an instance above memory_restart: `bm2 reload
// <name>-<i>`, that instance alone, as restartService runs the whole
// project's. It is PartOf= the target: a reload under way when the
// project stops stops too. %i is the index as the memory check names it;
// an instance of the template started by hand with anything else names
// no instance of the project, and the reload refuses it.
func reloadTemplate(r *renderer, p *config.Project, opts Options) []byte {
	// The instance by its unit's name, bm2@<name>-<i>.service, not
	// <name>-<i>: that could be another project's name (a project "api-1"
	// beside "api"), which the reload would take first. A project's name
	// needs no quoting (config.ValidName); QuoteArg escapes its
	// specifiers, and the "%i" is the one left.
	inst := units.Instance(p.Name, 0)
	cmd := units.QuoteCommand([]string{opts.CLI, opts.scopeFlag(), "reload", strings.TrimSuffix(inst, "0.service")}) + "%i.service"
	return reloadService(r, p, opts, "bm2 "+p.Name+"-%i memory restart", cmd, true)
}

func (o Options) scopeFlag() string {
	if o.user() {
		return "--user"
	}
	return "--system"
}

// reloadService is the unit of a reload run by the scope's manager:
// restartService's and reloadTemplate's.
func reloadService(r *renderer, p *config.Project, opts Options, description, execStart string, partOf bool) []byte {
	f := r.unit(p, opts.Layout.Systemctl)
	f.Add("Unit", "Description", description)
	f.Add("Unit", "Documentation", "man:bm2.toml(5) man:bm2(1)")
	f.Add("Unit", "SourcePath", units.Specifiers(p.File))
	if partOf {
		f.Add("Unit", "PartOf", units.Target(p.Name))
	}
	f.Add("Service", "Type", "oneshot")
	f.Add("Service", "ExecStart", execStart)
	var sandbox [][2]string
	if opts.user() {
		sandbox = userHelperSandbox
	} else {
		l := opts.Layout
		sandbox = append([][2]string{
			{"CapabilityBoundingSet", "CAP_SYS_PTRACE CAP_DAC_READ_SEARCH"},
			{"AmbientCapabilities", ""},
			{"ProtectSystem", "strict"},
			{"ReadWritePaths", "-" + units.Specifiers(l.StateDir) + " -" + units.Specifiers(l.RunStateDir) + " -" + units.Specifiers(l.CrashLogs.Dir)},
			// Read-only, not hidden: a reload that stops at an instance
			// says why, and a cwd under /home must not look missing.
			{"ProtectHome", "read-only"},
		}, append(slices.Clip(rootHelperProtect), userHelperSandbox...)...)
		sandbox = append(sandbox, [2]string{"UMask", "0022"}, [2]string{"KeyringMode", "private"})
	}
	addSandbox(f, opts, sandbox)
	return r.bytes()
}

// rootHelperProtect is what bm2's helper units add as root, past their
// file system view: private /tmp, devices and IPC, and the kernel's and
// the host's settings out of reach.
var rootHelperProtect = [][2]string{
	{"PrivateTmp", "yes"},
	{"PrivateDevices", "yes"},
	{"PrivateIPC", "yes"},
	{"ProtectKernelTunables", "yes"},
	{"ProtectKernelModules", "yes"},
	{"ProtectKernelLogs", "yes"},
	{"ProtectControlGroups", "yes"},
	{"ProtectClock", "yes"},
	{"ProtectHostname", "yes"},
}

// helperBase is the start of every helper unit's sandbox in both scopes:
// no new privileges, namespaces, realtime or set-id files, a fixed
// personality, no writable-executable memory, and only the address
// families it names.
func helperBase(families string) [][2]string {
	return [][2]string{
		{"NoNewPrivileges", "yes"},
		{"RestrictNamespaces", "yes"},
		{"RestrictRealtime", "yes"},
		{"RestrictSUIDSGID", "yes"},
		{"LockPersonality", "yes"},
		{"MemoryDenyWriteExecute", "yes"},
		{"RestrictAddressFamilies", families},
		{"SystemCallArchitectures", "native"},
		{"SystemCallFilter", "@system-service"},
	}
}

// userHelperSandbox is what bm2's helper units have in both scopes (a
// user's manager can apply no more without a user namespace of the
// service's own), as the reload needs it: no address family but
// systemd's bus and the journal (AF_UNIX) and sock_diag (AF_NETLINK).
var userHelperSandbox = slices.Clip(append(helperBase("AF_UNIX AF_NETLINK"),
	[2]string{"SystemCallFilter", "~@resources @privileged ptrace process_vm_readv process_vm_writev"},
	[2]string{"SystemCallErrorNumber", "EPERM"},
))

// memoryTimer is bm2-<name>-memory.timer: a check
// memory_check_interval_ms after the project starts and after each one
// started, to within 100 ms, as the health timer.
func memoryTimer(r *renderer, p *config.Project, systemctl string) []byte {
	f := r.unit(p, systemctl)
	f.Add("Unit", "Description", "bm2 "+p.Name+" memory check")
	f.Add("Unit", "Documentation", "man:bm2.toml(5)")
	f.Add("Unit", "SourcePath", units.Specifiers(p.File))
	f.Add("Unit", "PartOf", units.Target(p.Name))
	interval := config.FormatMS(p.MemoryRestart.Interval)
	f.Add("Timer", "OnActiveSec", interval)
	f.Add("Timer", "OnUnitActiveSec", interval)
	f.Add("Timer", "AccuracySec", "100ms")
	f.Add("Timer", "Unit", units.MemoryService(p.Name))
	return r.bytes()
}

// memoryService is bm2-<name>-memory.service, which the memory timer
// starts: `bm2-probe memory <name>`, which reads every running
// instance's memory from systemd (the cgroup's, MemoryCurrent) and, for
// one above BM2_MEMORY_RESTART (bytes) now and again a second later,
// emits memory_restart and starts bm2-<name>-reload@<i>.service. It
// reads its limit back from its own Environment=, as the health check
// does, so what is checked is what systemd runs.
//
// It needs systemd's bus and the journal only (AF_UNIX): as root in
// system scope it has no capability at all, no address family of a
// network (RestrictAddressFamilies=AF_UNIX; not PrivateNetwork=, whose
// namespace costs a start up to half a second), and nothing writable but
// the notification spool and the crash logs. It is PartOf=
// the target and not in the project's slice.
func memoryService(r *renderer, p *config.Project, opts Options) []byte {
	f := r.unit(p, opts.Layout.Systemctl)
	f.Add("Unit", "Description", "bm2 "+p.Name+" memory check")
	f.Add("Unit", "Documentation", "man:bm2.toml(5) man:bm2(1)")
	f.Add("Unit", "SourcePath", units.Specifiers(p.File))
	f.Add("Unit", "PartOf", units.Target(p.Name))
	f.Add("Unit", "StartLimitIntervalSec", "0")
	f.Add("Service", "Type", "oneshot")
	f.Add("Service", "ExecStart", units.QuoteCommand([]string{opts.Helper, "memory", p.Name}))
	f.Add("Service", "Environment", `"BM2_MEMORY_RESTART=`+strconv.FormatUint(p.MemoryRestart.Limit, 10)+`"`)
	f.Add("Service", "TimeoutStartSec", "30s")
	// The runs it has reported: /run/bm2/memory/<name>, its own.
	f.Add("Service", "RuntimeDirectory", units.Specifiers(path.Join("bm2", layout.MemorySubdir, p.Name)))
	f.Add("Service", "RuntimeDirectoryMode", "0700")
	f.Add("Service", "RuntimeDirectoryPreserve", "yes")
	// CAP_CHOWN alone (and chown(2)): a crash.log it creates is the
	// instance's group's to read (crashlog.LogGroup).
	addSandbox(f, opts, checkSandbox(opts, "CAP_CHOWN", nil, memoryUserSandbox, "@chown"))
	return r.bytes()
}

// memoryUserSandbox is what the memory service has in both scopes.
var memoryUserSandbox = slices.Clip(append(helperBase("AF_UNIX"),
	[2]string{"SystemCallFilter", "~@privileged @resources @obsolete @cpu-emulation @debug"},
	[2]string{"SystemCallErrorNumber", "EPERM"},
))

// healthTimer is bm2-<name>-health.timer: a check health_interval_ms
// after the project starts (OnActiveSec=, the timer being started with
// the target) and health_interval_ms after each one started
// (OnUnitActiveSec=), to within 100 ms (systemd's default accuracy is a
// minute, and would merge the checks of every project into one wake-up
// a minute).
func healthTimer(r *renderer, p *config.Project, systemctl string) []byte {
	f := r.unit(p, systemctl)
	f.Add("Unit", "Description", "bm2 "+p.Name+" health check")
	f.Add("Unit", "Documentation", "man:bm2.toml(5)")
	f.Add("Unit", "SourcePath", units.Specifiers(p.File))
	f.Add("Unit", "PartOf", units.Target(p.Name))
	interval := config.FormatMS(p.Health.Interval)
	f.Add("Timer", "OnActiveSec", interval)
	f.Add("Timer", "OnUnitActiveSec", interval)
	f.Add("Timer", "AccuracySec", "100ms")
	f.Add("Timer", "Unit", units.HealthService(p.Name))
	return r.bytes()
}

// HealthStartTimeout bounds one run of a health service beyond its
// checks' own timeout: reading the instances over D-Bus, starting the
// check as the app's user, queueing the restarts.
const HealthStartTimeout = 30 * time.Second

// healthService is bm2-<name>-health.service, which the health timer
// starts (and bm2 serve, start and reload, to wait for an instance's
// first healthy answer): `bm2-probe health <name>`, one check of every
// running instance. It reads its settings back from systemd (its own
// Environment=, each instance's BM2_HEALTH_PORT), as the probe does, and
// keeps its counts in its RuntimeDirectory=, root's, kept between runs,
// which bm2 list reads.
//
// In system scope it runs as root, sandboxed as the probe is, with three
// capabilities only, CAP_SETUID and CAP_SETGID (and the three system
// calls that use them): the GETs are made by a child it starts as each
// instance's own user, never with root's network identity; and CAP_CHOWN
// (chown(2)), which gives a crash.log it creates to the instance's group. Its address
// families are systemd's bus and the journal (AF_UNIX) and the checks'
// (AF_INET, AF_INET6), to loopback only (IPAddressDeny=). It is PartOf=
// the target, so a check under way when the project stops stops too,
// and never restarts what was just stopped; it is not in the project's
// slice.
func healthService(r *renderer, p *config.Project, opts Options) []byte {
	f := r.unit(p, opts.Layout.Systemctl)
	f.Add("Unit", "Description", "bm2 "+p.Name+" health check")
	f.Add("Unit", "Documentation", "man:bm2.toml(5) man:bm2(1)")
	f.Add("Unit", "SourcePath", units.Specifiers(p.File))
	f.Add("Unit", "PartOf", units.Target(p.Name))
	// Started every interval (500 ms at the least) and more often by a
	// waiting bm2 serve: systemd's default start limit (5 in 10 s) would
	// stop the checks.
	f.Add("Unit", "StartLimitIntervalSec", "0")
	f.Add("Service", "Type", "oneshot")
	if !opts.user() {
		// Its child runs as the instances' user: the unit may bind
		// nothing, whatever that child were made to do (package
		// portfence; SocketBindDeny= where systemd has BPF).
		f.Add("Service", "ExecStartPre", "+"+units.QuoteCommand([]string{opts.Helper, "fence", "--no-bind", units.HealthService(p.Name)}))
		f.Add("Service", "SocketBindDeny", "any")
	}
	f.Add("Service", "ExecStart", units.QuoteCommand([]string{opts.Helper, "health", p.Name}))
	f.Add("Service", "Environment", units.QuoteEnv("BM2_HEALTH_PATH", p.Health.Path))
	f.Add("Service", "Environment", `"BM2_HEALTH_INTERVAL_MS=`+strconv.FormatInt(p.Health.Interval.Milliseconds(), 10)+`"`)
	f.Add("Service", "Environment", `"BM2_HEALTH_TIMEOUT_MS=`+strconv.FormatInt(p.Health.Timeout.Milliseconds(), 10)+`"`)
	f.Add("Service", "Environment", `"BM2_HEALTH_FAILURES=`+strconv.Itoa(p.Health.Failures)+`"`)
	f.Add("Service", "TimeoutStartSec", config.FormatMS(p.Health.Timeout+HealthStartTimeout))
	// Its counts: /run/bm2/health/<name> (user scope: under
	// $XDG_RUNTIME_DIR), kept between runs; gone at reboot.
	f.Add("Service", "RuntimeDirectory", units.Specifiers(path.Join("bm2", layout.HealthSubdir, p.Name)))
	f.Add("Service", "RuntimeDirectoryMode", "0755")
	f.Add("Service", "RuntimeDirectoryPreserve", "yes")
	// CAP_SETUID, CAP_SETGID, setuid(2), setgid(2) and setgroups(2), with
	// which the child becomes the instance's user; CAP_CHOWN and chown(2),
	// for the group of a crash.log it creates.
	addSandbox(f, opts, checkSandbox(opts, "CAP_SETUID CAP_SETGID CAP_CHOWN",
		[][2]string{{"IPAddressAllow", "localhost"}, {"IPAddressDeny", "any"}}, healthUserSandbox, "setuid setgid setgroups @chown"))
	return r.bytes()
}

// checkSandbox is the sandbox of a project's check service, the health
// check's and the memory check's: in user scope user; as root the
// capabilities caps, nothing writable but the notification spool and
// the crash logs, /home hidden, rootHelperProtect, /proc of its own, the
// extra directives, then user's, and calls allowed again past user's
// system call filter.
func checkSandbox(opts Options, caps string, extra, user [][2]string, calls string) [][2]string {
	if opts.user() {
		return user
	}
	l := opts.Layout
	sandbox := [][2]string{
		{"CapabilityBoundingSet", caps},
		{"AmbientCapabilities", ""},
		{"ProtectSystem", "strict"},
		// The notification spool, an instance's crash.log.
		{"ReadWritePaths", "-" + units.Specifiers(l.StateDir) + " -" + units.Specifiers(l.CrashLogs.Dir)},
		{"ProtectHome", "yes"},
	}
	sandbox = append(sandbox, rootHelperProtect...)
	sandbox = append(sandbox, [2]string{"ProtectProc", "invisible"}, [2]string{"ProcSubset", "pid"})
	sandbox = append(sandbox, extra...)
	sandbox = append(sandbox, user...)
	return append(sandbox, [2]string{"SystemCallFilter", calls}, [2]string{"UMask", "0022"}, [2]string{"KeyringMode", "private"})
}

// addSandbox writes a helper's sandbox into its [Service], and in user
// scope the UMask= its files get there.
func addSandbox(f *units.File, opts Options, sandbox [][2]string) {
	for _, kv := range sandbox {
		f.Add("Service", kv[0], kv[1])
	}
	if opts.user() {
		f.Add("Service", "UMask", "0077")
	}
}

// healthUserSandbox is what the health service has in both scopes, as
// the probe has it (units/static/bm2-probe@.service).
var healthUserSandbox = slices.Clip(append(helperBase("AF_UNIX AF_INET AF_INET6"),
	[2]string{"SystemCallFilter", "~@privileged @resources @obsolete @cpu-emulation @debug"},
	[2]string{"SystemCallErrorNumber", "EPERM"},
))

// StartLimit returns the start-limit window and burst that implement the
// restart budget: more than max_restarts consecutive abnormal restarts and
// the instance gives up (errored). The window never ends (infinity), so a
// slow start on a busy host cannot slide old crashes out of it; instead
// the count starts again after every healthy run: bm2-probe resets it
// (ResetFailedUnit, which flushes systemd's start counter) once the run has
// listened on its port (in cluster mode: been confirmed) and stayed up for
// min_uptime_ms after that.
func StartLimit(p *config.Project) (interval string, burst int) {
	return "infinity", p.MaxRestarts + 1
}

// instanceShared is what every instance drop-in of a project has in
// common, quoted once.
type instanceShared struct {
	interval, burst string
	condition       string
	instanceMark    string // the instance's errored mark, up to its name suffix
	envFile         string // EnvironmentFile= of [env], "" without [env]
	execStart       string
	fence           string // ExecStartPre= of the port fence, less its ports; "" in user scope
	drain           string // ExecStop= of the steered port's drain; "" in fork mode and user scope
	file            string
	protectHome     string
	user            bool   // user scope: no User=, no capabilities
	backoff         bool   // restart_delay_max_ms, and a systemd that has the backoff
	restartDirect   bool   // a systemd that has RestartMode= (RestartDirect)
	systemctl       string // the scope's, for the header
	// The values of the project's own that every drop-in has.
	target, slice, cwd, stateDir, home  string
	appName, execMode, minUptime        string // Environment=
	restartSec, restartMax, timeoutStop string
}

func newInstanceShared(p *config.Project, opts Options) *instanceShared {
	s := &instanceShared{file: units.Specifiers(p.File), user: opts.user(), systemctl: opts.Layout.Systemctl,
		backoff: p.RestartDelayMax > 0 && Backoff(opts.SystemdVersion), restartDirect: RestartDirect(opts.SystemdVersion)}
	interval, burst := StartLimit(p)
	s.interval, s.burst = interval, strconv.Itoa(burst)
	s.target, s.slice, s.cwd = units.Target(p.Name), units.Slice(p.Name), units.Specifiers(p.Cwd)
	s.stateDir = units.Specifiers("bm2/apps/" + p.Name)
	// %S: the state directories' root (/var/lib, or ~/.config in user
	// scope); a name needs no quoting (config.ValidName).
	s.home = `"HOME=%S/` + s.stateDir + `"`
	s.appName = units.QuoteEnv("BM2_APP_NAME", p.Name)
	s.execMode = units.QuoteEnv("BM2_EXEC_MODE", string(p.Mode))
	s.minUptime = `"BM2_MIN_UPTIME_MS=` + strconv.FormatInt(p.MinUptime.Milliseconds(), 10) + `"`
	s.restartSec, s.timeoutStop = config.FormatMS(p.RestartDelay), config.FormatMS(p.StopTimeout)
	if s.backoff {
		s.restartMax = config.FormatMS(p.RestartDelayMax)
	}
	s.condition = "!" + units.Specifiers(opts.Layout.State().ErroredPath(p.Name))
	s.instanceMark = "!" + units.Specifiers(opts.Layout.State().InstanceErroredPath(p.Name+"-"))
	if len(p.Env) > 0 {
		s.envFile = units.Specifiers(path.Join(opts.OutDir, PrivateDir, p.Name+".env"))
	}
	// The wrapper refuses a missing runtime, one below its floor or an
	// unusable env_file before the app starts (exit 78, no restart), reads
	// env_file as the app's user, then becomes the runtime (execve).
	words := []string{opts.Helper, "run", string(p.Runtime)}
	if p.EnvFile != "" {
		words = append(words, "--env-file", p.EnvFile)
	}
	words = append(words, "--", p.RuntimeCommand())
	words = append(words, p.RuntimeArgs...)
	if p.Preload() {
		// reuseport = "preload": the runtime loads bm2's reusePort
		// preload, root's, beside the helper, on the instance's own
		// command line (not NODE_OPTIONS, which every child process
		// would inherit), just before the script (after runtime_args,
		// where `bun run` still comes first).
		words = append(words, preload.Args(p.Runtime, preload.Path(opts.Helper))...)
	}
	words = append(words, p.Script)
	words = append(words, p.Args...)
	s.execStart = units.QuoteCommand(words)
	if !s.user {
		// The port fence (package portfence): root ("+"), before the app,
		// with nothing from it: the instance (%i, whose cgroup it finds
		// itself in) and the ports, from this file alone. "-": its
		// failure does not fail the start. systemd enters
		// WorkingDirectory= for this command too, and a failed
		// ExecStartPre= is restarted even for the exit statuses of
		// RestartPreventExitStatus= (which looks at the main process
		// only): without "-" a missing cwd would be a crash loop, not
		// cwd_missing. A fence that could not be attached is in the
		// instance's journal and in bm2 status. A user manager cannot
		// attach BPF programs: no fence there (bm2 check says so).
		s.fence = "+-" + units.QuoteCommand([]string{opts.Helper, "fence"}) + " %i"
	}
	if !s.user && p.Mode == config.Cluster && p.StopTimeout >= config.DrainMargin {
		// The drain (package steer, bm2-probe steer drain): root ("+"),
		// at every stop before systemd's SIGTERM, it takes the instance
		// out of its port's kernel-steered turn and waits up to drain_ms
		// (BM2_DRAIN_MS, read back from systemd; at most stop_timeout_ms
		// less config.DrainMargin, since TimeoutStopSec= bounds it too)
		// for its accepted requests to be answered. It never fails the
		// stop; with a shorter stop_timeout_ms there is no time for it. A
		// user manager cannot steer: none there.
		s.drain = "+" + units.QuoteCommand([]string{opts.Helper, "steer", "drain"}) + " %i"
	}
	s.protectHome = "yes"
	for _, dir := range []string{p.Cwd, p.RuntimePath, p.ScriptPath(), p.EnvFile} {
		if underHome(dir) {
			s.protectHome = "read-only" // the app lives there: it must see it
		}
	}
	return s
}

// underHome tells whether a path is in one of the trees ProtectHome=
// hides.
func underHome(p string) bool {
	for _, h := range []string{"/home", "/root", "/run/user"} {
		if p == h || strings.HasPrefix(p, h+"/") {
			return true
		}
	}
	return false
}

// Placeholders for what differs between the drop-ins of one project:
// control characters, which no value that reaches a drop-in may contain
// (config refuses them), so they cannot collide with anything.
const (
	slotIndex  = "\x01"
	slotPort   = "\x02"
	slotHealth = "\x03" // BM2_HEALTH_PORT
)

// dropInTemplate is a project's drop-in cut at its placeholders, so that
// each instance's is a concatenation: rendering a 1000-instance project
// costs one render.
type dropInTemplate struct {
	parts [][]byte // parts[k] is followed by slots[k]
	slots []byte   // slotIndex[0], slotPort[0] or slotHealth[0]
	size  int
}

// template renders the drop-in once with placeholders. It reports false
// when the placeholders are not exactly where the instance's index and port
// go (a control character in the project file's own path).
func (s *instanceShared) template(r *renderer, p *config.Project) (dropInTemplate, bool) {
	health := ""
	if p.HealthChecked() {
		health = slotHealth
	}
	data := s.dropIn(r, p, slotIndex, slotIndex, slotPort, health)
	var t dropInTemplate
	start := 0
	for i, c := range data {
		if c == slotIndex[0] || c == slotPort[0] || c == slotHealth[0] {
			t.parts = append(t.parts, data[start:i])
			t.slots = append(t.slots, c)
			start = i + 1
		}
	}
	t.parts = append(t.parts, data[start:])
	t.size = len(data) + 8*len(t.slots)
	// Description, Wants= the probe, the instance's errored mark,
	// BM2_APP_INSTANCE, BM2_APP_PORT and one port per port_env name.
	want := 5 // ... and the index under instance_var
	if !p.IsWorker() {
		want += 1 + len(p.PortEnv) // BM2_APP_PORT, and a worker has no port_env
		if s.fence != "" {
			want++ // the port fence's own port
		}
	}
	if p.HealthChecked() {
		want++ // BM2_HEALTH_PORT
		if s.fence != "" && p.Health.Port != 0 {
			want++ // and the fence's
		}
	}
	return t, len(t.slots) == want
}

// instance is instance i's drop-in, rendered into r: port is its port,
// health its health port.
func (t dropInTemplate) instance(r *renderer, i, port, health int) []byte {
	start := len(r.buf)
	out := slices.Grow(r.buf, t.size)
	for k, part := range t.parts {
		out = append(out, part...)
		if k < len(t.slots) {
			switch t.slots[k] {
			case slotIndex[0]:
				out = strconv.AppendInt(out, int64(i), 10)
			case slotPort[0]:
				out = strconv.AppendInt(out, int64(port), 10)
			default:
				out = strconv.AppendInt(out, int64(health), 10)
			}
		}
	}
	r.buf = out
	return r.done(start)
}

// dropIn renders the drop-in of the instance whose name suffix ("0",
// "surge"), BM2_APP_INSTANCE, port and health port ("" without a health
// check) are given as text (the template's placeholders).
func (s *instanceShared) dropIn(r *renderer, p *config.Project, suffix, index, port, health string) []byte {
	f := r.unit(p, s.systemctl)
	if suffix == units.SurgeName {
		f.Add("Unit", "Description", "bm2 "+p.Name+" surge instance (BM2_APP_INSTANCE="+index+"), run by bm2 reload")
	} else {
		f.Add("Unit", "Description", "bm2 "+p.Name+" instance "+index)
	}
	f.Add("Unit", "SourcePath", s.file)
	f.Add("Unit", "PartOf", s.target)
	// The instance's probe, for every start of it, automatic restarts
	// included (bm2-probe@.service is ordered after the instance, so it
	// starts once the instance's process runs, and is PartOf= it): in
	// cluster mode it checks reusePort; in both modes it
	// resets the restart budget after a healthy run. It runs as root in a
	// unit of its own: no root command ever runs in the instance's
	// environment to start it.
	f.Add("Unit", "Wants", "bm2-probe@"+p.Name+"-"+suffix+".service")
	// The units the project needs (wants, requires), as written: pulled in
	// by every start and ordered before it, so that at boot the app starts
	// once they are up; Requires= also stops (or restarts) the instance
	// with the unit.
	for _, u := range p.Wants {
		f.Add("Unit", "Wants", u)
	}
	for _, u := range p.Requires {
		f.Add("Unit", "Requires", u)
	}
	for _, n := range p.Needs() {
		f.Add("Unit", "After", n.Unit)
	}
	// after: ordering only, nothing pulled in (what serve registers for
	// the wants and requires of a file root did not write).
	for _, u := range p.After {
		if !slices.Contains(p.Wants, u) && !slices.Contains(p.Requires, u) {
			f.Add("Unit", "After", u)
		}
	}
	f.Add("Unit", "StartLimitIntervalSec", s.interval)
	f.Add("Unit", "StartLimitBurst", s.burst)
	// An errored project stays down, across daemon-reload and reboot, until
	// `bm2 serve` or `bm2 start` clears the mark (see package state).
	f.Add("Unit", "ConditionPathExists", s.condition)
	// So does one instance that cannot listen on its port (another user's
	// process holds it), until the next boot or `bm2 start` (see package
	// state); its neighbours are not held back.
	f.Add("Unit", "ConditionPathExists", s.instanceMark+suffix)

	f.Add("Service", "Slice", s.slice)
	f.Add("Service", "WorkingDirectory", s.cwd)
	// In user scope the user's own manager runs everything as the user;
	// User= and Group= are not available there.
	switch {
	case s.user:
	case p.OwnAccount():
		f.Add("Service", "User", p.Account())
		// The project's own account: allocated by systemd while the project
		// runs, or the static account of that name when one exists.
		f.Add("Service", "DynamicUser", "yes")
	default:
		f.Add("Service", "User", p.Account())
		// A shared account's IPC objects are not the project's to remove.
		f.Add("Service", "RemoveIPC", "no")
	}
	for _, d := range config.Directives(p) {
		if d.Name == "Group" && !s.user {
			f.Add("Service", d.Name, d.Value)
		}
	}
	f.Add("Service", "Environment", s.appName)
	// Digits need no quoting: the placeholders go in as they are.
	f.Add("Service", "Environment", `"BM2_APP_INSTANCE=`+index+`"`)
	// The same index under PM2's name (instance_var), which apps written
	// for PM2 read ("run the cron where NODE_APP_INSTANCE is 0").
	f.Add("Service", "Environment", `"`+p.IndexVar()+`=`+index+`"`)
	// HOME: the project's state directory, which its account may write
	// (an app that keeps files under ~ finds a place; [env] may say
	// otherwise).
	f.Add("Service", "Environment", s.home)
	if !p.IsWorker() { // a worker has no port
		f.Add("Service", "Environment", `"BM2_APP_PORT=`+port+`"`)
		// port_env: the same port under the names the app reads (PORT, for
		// an app written for PM2). Names are [A-Za-z_][A-Za-z0-9_]*: no
		// quoting needed either.
		for _, name := range p.PortEnv {
			f.Add("Service", "Environment", `"`+name+`=`+port+`"`)
		}
	}
	if health != "" {
		// Where the health check asks (health_port+i, or the instance's
		// own port): for the app, which answers there, and for
		// bm2-probe health, which reads it back from systemd.
		f.Add("Service", "Environment", `"BM2_HEALTH_PORT=`+health+`"`)
	}
	f.Add("Service", "Environment", s.execMode)
	if suffix == units.SurgeName {
		f.Add("Service", "Environment", `"BM2_APP_SURGE=1"`)
	}
	// For bm2-probe, which reads it from systemd: how long a run that
	// listens must stay up to count as healthy.
	f.Add("Service", "Environment", s.minUptime)
	if s.drain != "" {
		// For bm2-probe steer drain, which reads it from systemd: how
		// long a stopping instance waits for its requests (drain_ms).
		f.Add("Service", "Environment", `"BM2_DRAIN_MS=`+strconv.FormatInt(p.Drain.Milliseconds(), 10)+`"`)
	}
	if s.envFile != "" {
		f.Add("Service", "EnvironmentFile", s.envFile)
	}
	if s.fence != "" {
		var ports []string
		if !p.IsWorker() {
			ports = append(ports, port)
		}
		if health != "" && p.Health.Port != 0 {
			ports = append(ports, health) // a port of its own for the check
		}
		for _, n := range p.Sandbox.ExtraPorts {
			ports = append(ports, strconv.Itoa(n))
		}
		// A worker with no port at all: the fence lets it bind an
		// ephemeral port only.
		f.Add("Service", "ExecStartPre", strings.TrimSpace(s.fence+" "+strings.Join(ports, " ")))
	}
	f.Add("Service", "ExecStart", s.execStart)
	if s.drain != "" {
		f.Add("Service", "ExecStop", s.drain)
	}
	f.Add("Service", "RestartSec", s.restartSec)
	if s.restartDirect {
		// An automatic restart that does not pass through "failed": no
		// give-up record at every crash (RestartModeVersion).
		f.Add("Service", "RestartMode", "direct")
	}
	if s.backoff {
		// restart_delay_max_ms: from RestartSec= up to the max. Before
		// systemd 254 RestartSec= alone applies (bm2 check says so).
		f.Add("Service", "RestartSteps", strconv.Itoa(RestartSteps))
		f.Add("Service", "RestartMaxDelaySec", s.restartMax)
	}
	f.Add("Service", "TimeoutStopSec", s.timeoutStop)
	f.Add("Service", "StateDirectory", s.stateDir)
	logs(f, p)
	s.sandbox(f, p)
	for _, d := range config.Directives(p) {
		if d.Name != "Group" {
			f.Add("Service", d.Name, d.Value) // parsed without specifier expansion
		}
	}
	return r.bytes()
}

// logs adds the project's journal settings; none when it sets none.
// journald's own rate limit (10,000 lines per 30 s per instance, scaled
// with free disk space) applies unless the project sets one. systemd
// passes a LogRateLimitBurst= or LogRateLimitIntervalSec= of 0 on as "not
// set", so no limit is the largest burst journald can scale
// (config.MaxLogRateLimitBurst), alone. The template turns the level
// prefixes off (SyslogLevelPrefix=no); log_level_prefix turns them back
// on.
func logs(f *units.File, p *config.Project) {
	l := p.Log
	switch {
	case l.Unlimited():
		f.Add("Service", "LogRateLimitBurst", strconv.Itoa(config.MaxLogRateLimitBurst))
	case l.RateLimited():
		if l.RateLimitInterval != nil {
			f.Add("Service", "LogRateLimitIntervalSec", config.FormatMS(*l.RateLimitInterval))
		}
		if l.RateLimitBurst != nil {
			f.Add("Service", "LogRateLimitBurst", strconv.Itoa(*l.RateLimitBurst))
		}
	}
	if l.LevelPrefix {
		f.Add("Service", "SyslogLevelPrefix", "yes")
	}
}

// sandbox adds what the project changes in the template's sandbox (see
// bm2@.service and bm2.toml(5), "Sandbox").
func (s *instanceShared) sandbox(f *units.File, p *config.Project) {
	if p.Sandbox.Mode == config.Compat {
		for _, kv := range compatSandbox {
			f.Add("Service", kv[0], kv[1])
		}
		return
	}
	f.Add("Service", "ProtectHome", s.protectHome)
	for _, w := range p.Sandbox.Writable {
		// "-": a path that does not exist yet is no reason not to start.
		f.Add("Service", "ReadWritePaths", "-"+units.Specifiers(w))
	}
	if lowestPort(p) < 1024 && !s.user {
		// Binding a privileged port: that one capability, and no user
		// namespace (a capability inside one does not count for the host's
		// network).
		f.Add("Service", "PrivateUsers", "no")
		f.Add("Service", "CapabilityBoundingSet", "CAP_NET_BIND_SERVICE")
		f.Add("Service", "AmbientCapabilities", "CAP_NET_BIND_SERVICE")
	}
}

// lowestPort is the lowest port an instance of p may bind: its range's,
// a health port's or an extra port's.
func lowestPort(p *config.Project) int {
	lo := 65536 // a worker's range is empty
	if !p.IsWorker() {
		lo = p.Ports().Lo
	}
	if r, ok := p.HealthPorts(); ok {
		lo = min(lo, r.Lo)
	}
	for _, n := range p.Sandbox.ExtraPorts {
		lo = min(lo, n)
	}
	return lo
}

// compatSandbox turns the template's sandbox back into bm2 0.1's
// (NoNewPrivileges=, PrivateTmp=, ProtectSystem=full).
var compatSandbox = [][2]string{
	{"ProtectSystem", "full"},
	{"ProtectHome", "no"},
	{"PrivateDevices", "no"},
	{"PrivateUsers", "no"},
	{"PrivateIPC", "no"},
	{"ProtectKernelTunables", "no"},
	{"ProtectKernelModules", "no"},
	{"ProtectKernelLogs", "no"},
	{"ProtectControlGroups", "no"},
	{"ProtectClock", "no"},
	{"ProtectHostname", "no"},
	{"ProtectProc", "default"},
	{"RestrictNamespaces", "no"},
	{"RestrictRealtime", "no"},
	{"RestrictSUIDSGID", "no"},
	{"LockPersonality", "no"},
	{"RestrictAddressFamilies", ""},
	{"SystemCallFilter", ""},
	{"SystemCallArchitectures", ""},
	{"CapabilityBoundingSet", "~"},
	{"UMask", "0022"},
}

// InstanceDropIn is the drop-in instance i of a validated project gets
// (bm2@<name>-<i>.service.d/50-bm2.conf), for what must run with the
// instance's account and sandbox before the project is generated (bm2
// check's confined version check, package confine).
func InstanceDropIn(p *config.Project, opts Options, i int) []byte {
	if opts.Helper == "" {
		opts.Helper = DefaultHelper
	}
	if opts.Layout.Kind == "" {
		opts.Layout = layout.System()
	}
	if opts.OutDir == "" {
		opts.OutDir = opts.Layout.GeneratorDir
	}
	s := newInstanceShared(p, opts)
	return s.dropIn(new(renderer), p, strconv.Itoa(i), strconv.Itoa(i), strconv.Itoa(p.InstancePort(i)), healthPortText(p, i))
}
