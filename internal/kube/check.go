package kube

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Name limits: a Service's name is a DNS-1035 label (63 bytes, a letter
// first), and a StatefulSet's pods carry a controller-revision-hash
// label of its name, "-" and a 10-character hash, which must fit a label
// value (63).
const (
	maxName        = 63
	maxOrdinalName = 52
)

// hostOnly are the trees an image does not have: the users' homes, and
// what a host makes at boot or per login.
var hostOnly = []string{"/home", "/root", "/run", "/tmp", "/var/tmp"}

func underHostOnly(p string) (string, bool) {
	for _, h := range hostOnly {
		if p == h || strings.HasPrefix(p, h+"/") {
			return h, true
		}
	}
	return "", false
}

// objectName is a project's name as Kubernetes objects take it: '_',
// which bm2 names allow and Kubernetes names do not, becomes '-'.
func objectName(project string) string { return strings.ReplaceAll(project, "_", "-") }

// check decides what of the project maps, and how: the problems that
// keep it from being exported (ErrUnmappable), and, in m, the settings
// left out (ErrDropped) and the notes. full: the whole export; without
// it (a route alone) only the names matter.
func (m *model) check(full bool) []*config.Error {
	var errs []*config.Error
	refuse := func(key, format string, args ...any) {
		errs = append(errs, m.problem(key, ErrUnmappable, format, args...))
	}
	p := m.p
	limit := maxName
	if full && m.o.Ordinal {
		limit = maxOrdinalName
	}
	switch {
	case len(m.name) > limit && full && m.o.Ordinal:
		refuse("name", "%q is %d bytes long: a StatefulSet's name takes at most %d (its pods' controller-revision-hash label adds 11 to it); rename the project, or export without --ordinal", p.Name, len(m.name), limit)
	case len(m.name) > limit:
		refuse("name", "%q is %d bytes long: a Kubernetes Service's name takes at most %d; rename the project", p.Name, len(m.name), limit)
	case m.name == "" || m.name[0] < 'a' || m.name[0] > 'z':
		refuse("name", "%q cannot name a Kubernetes Service, whose name starts with a letter; rename the project", p.Name)
	case len(validation.IsDNS1035Label(m.name)) > 0 || len(content.IsLabelValue(p.Name)) > 0:
		refuse("name", "%q cannot name Kubernetes objects, whose names end with a letter or digit; rename the project", p.Name)
	}
	switch {
	case p.IsWorker() && !full:
		refuse("port", "not set: %s is a worker, which serves nothing an HTTPRoute could send requests to; leave it out", p.Name)
	case p.IsWorker():
		// No port of its own: no Service, no containerPort, no probe on
		// a port (see explain).
	case p.Port < 1 || p.Port > 65535:
		refuse("port", "%d is not a port", p.Port)
	}
	if p.Instances < 1 {
		refuse("instances", "%d instances: a workload needs at least one replica", p.Instances)
	}
	if !full {
		return errs
	}
	if p.PrivateUnread {
		errs = append(errs, &config.Error{File: config.PrivatePath(p.File), Err: ErrUnmappable,
			Msg: "cannot be read, so the names of [env] are not known: run the export as root (sudo bm2 export kube ...)"})
	}

	// Where the app is: the image must have it there.
	switch h, ok := underHostOnly(p.Cwd); {
	case !path.IsAbs(p.Cwd):
		refuse("cwd", "%q is not an absolute path: the container's working directory must be one", p.Cwd)
	case ok:
		refuse("cwd", "%s is under %s, which an image does not have: set cwd to where the image holds the app (e.g. cwd = \"/srv/%s\", and COPY the app there)", p.Cwd, h, p.Name)
	}
	if h, ok := underHostOnly(p.RuntimePath); ok {
		refuse("runtime_path", "%s is under %s, which an image does not have: remove the key (the image's %s on its PATH runs the app) or name the runtime's path in the image", p.RuntimePath, h, p.Runtime)
	}
	if path.IsAbs(p.Script) {
		if h, ok := underHostOnly(p.Script); ok {
			refuse("script", "%s is under %s, which an image does not have: give the script relative to cwd", p.Script, h)
		}
	}

	// Who it runs as: the pod is never root, and only numbers cross the
	// image boundary.
	switch {
	case p.User == "root" || p.User == "0":
		refuse("user", "%q: the pod runs with runAsNonRoot, so it cannot be root; remove the key (the image's USER runs the app) or give another account's uid", p.User)
	case p.User != "" && !isNumber(p.User):
		m.drop("user", "%q is left out: an account name means nothing across the image boundary, so the pod runs as the image's USER (never root: runAsNonRoot); give a uid to set runAsUser", p.User)
	}
	if p.Group != "" && !isNumber(p.Group) {
		m.drop("group", "%q is left out: a group name means nothing across the image boundary, so the pod runs with the image's group; give a gid to set runAsGroup", p.Group)
	}

	for _, r := range []struct{ key, value string }{
		{"resources.memory_max", p.Resources.MemoryMax},
		{"resources.memory_high", p.Resources.MemoryHigh},
	} {
		if strings.HasSuffix(r.value, "%") {
			refuse(r.key, "%q is a share of the host's memory, which a pod does not have: give a size, like \"512M\"", r.value)
		} else if _, err := memoryQuantity(r.value); err != nil {
			refuse(r.key, "%q: %v", r.value, err)
		}
	}

	if p.MaxInstance {
		m.drop("instances", "\"max\" is one per CPU of this host: replicas = %d; give a number, or scale with kubectl scale or a HorizontalPodAutoscaler", p.Instances)
	}
	// The restart budget: Kubernetes restarts a failed container with a
	// back-off of its own and never gives up.
	if p.RestartDelay != config.DefaultRestartDelay {
		m.drop("restart_delay_ms", "%d is left out: the kubelet restarts a failed container after a back-off of its own (10 s, doubling to 5 min)", p.RestartDelay.Milliseconds())
	}
	if p.RestartDelayMax > 0 {
		m.drop("restart_delay_max_ms", "%d is left out: the kubelet's back-off (10 s, doubling to 5 min) replaces it", p.RestartDelayMax.Milliseconds())
	}
	if p.MaxRestarts != config.DefaultMaxRestarts {
		m.drop("max_restarts", "%d is left out: Kubernetes never gives a container up (no errored state); it backs off (CrashLoopBackOff) and tries again", p.MaxRestarts)
	}
	if p.RestartSchedule != "" {
		m.drop("restart_schedule", "%q is left out: a pod has no restart timer; a CronJob running `kubectl rollout restart %s/%s` (with a ServiceAccount allowed to) does the same", p.RestartSchedule, strings.ToLower(m.workloadKind()), m.name)
	}
	if p.MemoryWatched() {
		m.drop("memory_restart", "%q is left out: a pod has no graceful memory restart; its memory limit (memory_max) is the kernel's OOM kill, after which the kubelet restarts the container", p.MemoryRestart.Size)
	}
	for _, n := range []struct {
		key   string
		units []string
	}{{"wants", p.Wants}, {"requires", p.Requires}, {"after", p.After}} {
		if len(n.units) > 0 {
			m.drop(n.key, "%s: a pod is not ordered after systemd units: it starts at once and is restarted until what it needs answers (an init container can wait for it)", strings.Join(n.units, ", "))
		}
	}
	if p.Notify.Webhook != "" {
		// Never the URL: it may carry a token.
		m.drop("notify.webhook", "[notify] is left out: bm2's notifications come from its hooks on the host, which do not run in a pod; alert on the pods' restarts and readiness in the cluster")
	}
	if p.Log.RateLimitBurst != nil {
		m.drop("log_rate_limit_burst", "left out: the app's output goes to the container runtime's log, which the kubelet rotates; it has no rate limit per pod")
	}
	if p.Log.RateLimitInterval != nil {
		m.drop("log_rate_limit_interval_ms", "left out: the container runtime's log has no rate limit per pod")
	}
	if p.Log.LevelPrefix {
		m.drop("log_level_prefix", "left out: the container runtime logs every line as written, \"<N>\" prefix and all")
	}
	for _, r := range []struct {
		key string
		set bool
		why string
	}{
		{"resources.cpu_weight", p.Resources.CPUWeight > 0, "the CPU request (here the limit) gives the pod its share"},
		{"resources.tasks_max", p.Resources.TasksMax > 0, "a pod's process limit is the kubelet's (podPidsLimit)"},
		{"resources.slice_tasks_max", p.Resources.SliceTasksMax > 0, "a pod's process limit is the kubelet's (podPidsLimit)"},
		{"resources.limit_nofile", p.Resources.LimitNOFILE > 0, "a container's open-file limit is the container runtime's"},
	} {
		if r.set {
			m.drop(r.key, "left out: %s", r.why)
		}
	}
	for i, w := range p.Sandbox.Writable {
		key := "sandbox.writable[" + strconv.Itoa(i) + "]"
		if contains(w, p.Cwd) {
			m.drop(key, "%s holds the app, so the root file system stays writable (readOnlyRootFilesystem: false); what the app writes there is lost with its container", w)
		} else {
			m.drop(key, "%s becomes an emptyDir: it starts empty in each pod (hiding what the image has there) and is lost with the pod; mount a PersistentVolumeClaim there to keep it", w)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	sort.SliceStable(m.warnings, func(i, j int) bool { return m.warnings[i].Line < m.warnings[j].Line })
	m.explain()
	return nil
}

// explain writes the notes every export of the project carries: what maps
// to what, and what does not.
func (m *model) explain() {
	p := m.p
	kind := m.workloadKind()
	switch p.Mode {
	case config.Worker:
		ports, probe := "no containerPort", "no probe"
		var kept []string
		if p.HealthChecked() {
			kept = append(kept, fmt.Sprintf("health_port %d", p.HealthPort(0)))
			probe = "probes only of its health check"
		}
		if len(p.Sandbox.ExtraPorts) > 0 {
			kept = append(kept, "[sandbox] extra_ports")
		}
		if len(kept) > 0 {
			ports = "containerPorts only for " + strings.Join(kept, " and ")
		}
		m.note("%s: a worker, %d replicas, no port: no Service. A %s of %d replicas whose pods listen on no port of their own (a queue consumer, a cron job, a bot: nothing connects to them), as on a host: no BM2_APP_PORT, %s, %s; BM2_EXEC_MODE is \"worker\".",
			p.Name, p.Instances, kind, p.Instances, ports, probe)
		if m.o.Ordinal {
			m.note("serviceName names Service %s, which this file does not create: a worker has nothing to serve, and Kubernetes does not require the Service to exist (no controller checks it): the pods keep their names and ordinals and get no DNS records. serviceName cannot change on a StatefulSet, so it is the one a project with a port has: give the project a port, and its export adds that headless Service to the same StatefulSet.",
				m.headless())
		}
		if m.o.gateway.name != "" {
			m.note("No HTTPRoute to Gateway %s: a worker has no port and no Service for a route to send requests to, as bm2 gateway has no upstream for one.", m.o.Gateway)
		}
	case config.Fork:
		m.note("%s: %d x fork mode on port %d: a %s of %d replicas behind Service %s. On a host instance i listens on port+i; in a pod each replica has a network namespace and the whole port to itself, so every one listens on %d (BM2_APP_PORT) and the Service balances, as the gateway does in front of fork mode.",
			p.Name, p.Instances, p.Port, kind, p.Instances, m.name, p.Port)
	default:
		m.note("%s: %d x cluster mode on port %d: a %s of %d replicas behind Service %s. reusePort is a host matter: each pod has a network namespace of its own and one listener on the port, and the Service spreads the connections over the replicas.",
			p.Name, p.Instances, p.Port, kind, p.Instances, m.name)
	}
	if p.Preload() {
		m.note("reuseport = \"preload\" is left out: alone on its port, the app needs no reusePort, and bm2's preload is not in the image.")
	}
	if m.o.Ordinal {
		m.note("BM2_APP_INSTANCE is each pod's ordinal, \"0\" to \"%d\" (the label apps.kubernetes.io/pod-index), as bm2's instance numbers are; pods start in parallel, as bm2's instances do, and a rollout replaces one at a time, highest first, with no surge.", p.Instances-1)
	} else {
		rollout := "A rollout adds one pod before it stops one (maxSurge 1, maxUnavailable 0), as bm2 reload's surge instance does."
		if p.IsWorker() {
			rollout = "A rollout stops one pod before it starts its replacement (maxSurge 0, maxUnavailable 1), as bm2 reload restarts a worker's instances one at a time: never more than the replicas run at once, so that a cron job or a bot of one replica never runs twice."
		}
		m.note("BM2_APP_INSTANCE is not set: a Deployment's replicas are identical, and what instance \"0\" does on a host (migrations, cron) would run in every pod. Run one-off work as a Job (`kubectl create job %s-migrate --image=%s -- %s ...`) or a CronJob, or export with --ordinal for a StatefulSet whose pods have numbers. %s",
			m.name, m.o.Image, p.RuntimeCommand(), rollout)
	}
	restarts := "Restarts: the kubelet restarts the container whenever it exits (restartPolicy Always: an exit 0 too), after a back-off of 10 s doubling to 5 min, and never gives up; restart_delay_ms and max_restarts have no equivalent."
	const grace = "terminationGracePeriodSeconds is stop_timeout_ms rounded up: SIGTERM, then SIGKILL."
	switch {
	case p.IsWorker() && !p.HealthChecked():
		m.note("%s A worker has no probe, on a host or here: a pod is ready once its container runs, and available once it has run minReadySeconds (min_uptime_ms), as bm2 counts a worker online once its run has stayed up min_uptime_ms. %s",
			restarts, grace)
	case p.IsWorker():
		m.note("%s The probes are the worker's health check: the startup probe gives the app %d s to answer it; readiness holds a rollout until a new pod answers; liveness restarts one that stops answering; minReadySeconds is min_uptime_ms. %s",
			restarts, startupWindow, grace)
	default:
		m.note("%s The probes stand for bm2's: the startup probe gives the app %d s to listen, as bm2's probe does; readiness takes a pod out of the Service while it does not answer; liveness restarts one that stops answering; minReadySeconds is min_uptime_ms. %s",
			restarts, startupWindow, grace)
	}
	if p.HealthChecked() {
		m.note("The health check (health_path) is the probes' request: GET %s on port %d, which every pod answers as instance 0 does on a host; liveness asks every %d s, waits %d s and restarts the pod after %d failures in a row, as bm2's check does.",
			p.Health.Path, p.HealthPort(0), ceilSeconds(p.Health.Interval), ceilSeconds(p.Health.Timeout), p.Health.Failures)
	}
	if len(p.Env) > 0 {
		names := make([]string, len(p.Env))
		for i, e := range p.Env {
			names[i] = e.Name
		}
		create := fmt.Sprintf("kubectl create secret generic %s%s --from-env-file=FILE", m.envSecret(), m.nsFlag())
		if m.o.Secrets {
			m.note("[env] (%s) comes from Secret %s, in %s.secret.yaml beside this file (mode 0600; keep it out of version control).", strings.Join(names, ", "), m.envSecret(), m.p.Name)
		} else {
			m.note("[env] (%s) comes from Secret %s, which you create: `%s` (FILE: one NAME=value line each), or `bm2 export kube --secrets --out DIR` writes it. Its values are never in this file.",
				strings.Join(names, ", "), m.envSecret(), create)
		}
	}
	if p.EnvFile != "" {
		m.note("env_file (%s) comes from Secret %s, which the pod waits for, as a host refuses to start without the file. Create it with `kubectl create secret generic %s%s --from-env-file=%s`; kubectl takes each value as written, quotes and all, where systemd's EnvironmentFile= syntax would unquote it. As on a host, its variables override [env] (so [env] comes through envFrom too), never BM2_*.",
			p.EnvFile, m.envFileSecret(), m.envFileSecret(), m.nsFlag(), p.EnvFile)
	}
	m.note("The sandbox: runAsNonRoot, no privilege escalation, every capability dropped%s, the runtime's default seccomp profile, no service account token, no Service links in the environment, %s. The image must run as a numeric non-root USER (or give user a uid), and its runtime must meet bm2's floor (Bun 1.4.0, Node.js 24.0.0): nothing checks it before the app starts.",
		m.capsNote(), m.rootfsNote())
}

func (m *model) capsNote() string {
	if m.lowPort() {
		return fmt.Sprintf(" but NET_BIND_SERVICE (a port below 1024; a process that is not root has it only as the runtime binary's file capability, so the pod also lets every process bind from port %d up: the sysctl net.ipv4.ip_unprivileged_port_start, for its network namespace alone)", m.lowestPort())
	}
	return ""
}

func (m *model) rootfsNote() string {
	if m.writableRoot() {
		if m.p.Sandbox.Mode == config.Compat {
			return "and, for sandbox mode \"compat\", a writable root file system; /tmp and the state directory are emptyDirs"
		}
		return "and a writable root file system (a writable path holds the app); /tmp and the state directory are emptyDirs"
	}
	return "a read-only root file system with emptyDirs for /tmp, the state directory (STATE_DIRECTORY) and [sandbox] writable: each starts empty in each pod and goes with it"
}

func (m *model) nsFlag() string {
	if m.o.Namespace == "" {
		return ""
	}
	return " -n " + m.o.Namespace
}

func (m *model) workloadKind() string {
	if m.o.Ordinal {
		return "StatefulSet"
	}
	return "Deployment"
}

// writableRoot tells whether the container's root file system stays
// writable: sandbox mode "compat" (bm2 0.1's sandbox, where the app may
// write about anywhere), or a writable path that holds the app.
func (m *model) writableRoot() bool {
	if m.p.Sandbox.Mode == config.Compat {
		return true
	}
	for _, w := range m.p.Sandbox.Writable {
		if contains(w, m.p.Cwd) {
			return true
		}
	}
	return false
}

// lowPort tells whether the app binds a port below 1024 (its own or an
// extra one; health_port is 1024 or more): it needs CAP_NET_BIND_SERVICE,
// as on a host.
func (m *model) lowPort() bool { return m.lowestPort() < 1024 }

func (m *model) lowestPort() int {
	lo := 65536 // a worker has no port of its own
	if !m.p.IsWorker() {
		lo = m.p.Port
	}
	for _, n := range m.p.Sandbox.ExtraPorts {
		lo = min(lo, n)
	}
	return lo
}

// contains tells whether dir is p or above it.
func contains(dir, p string) bool {
	return dir == p || dir == "/" || strings.HasPrefix(p, dir+"/")
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}
