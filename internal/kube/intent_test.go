package kube

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const base = "name = \"app\"\nscript = \"main.js\"\ncwd = \"/srv/app\"\nport = 3000\n"

// project parses base plus extra lines as /etc/bm2/app.toml.
func project(t *testing.T, extra string) Source {
	t.Helper()
	return parse(t, "/etc/bm2/app.toml", base+extra)
}

func export(t *testing.T, opts Options, srcs ...Source) *Result {
	t.Helper()
	if opts.Image == "" {
		opts.Image = testImage
	}
	res, err := Export(srcs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// objects decodes the manifests (strictly) and returns the pod spec of
// the workload, with the workload.
func workload(t *testing.T, res *Result) (replicas int32, pod corev1.PodSpec, obj any) {
	t.Helper()
	for _, o := range decodeAll(t, res.Manifests()) {
		switch w := o.(type) {
		case *appsv1.Deployment:
			return *w.Spec.Replicas, w.Spec.Template.Spec, w
		case *appsv1.StatefulSet:
			return *w.Spec.Replicas, w.Spec.Template.Spec, w
		}
	}
	t.Fatal("no workload in the manifests")
	return 0, corev1.PodSpec{}, nil
}

func envOf(c corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

// No [env] value reaches the manifests, the warnings or the notes, however
// it is written; the Secret file holds each one exactly.
func TestEnvValuesNeverInTheManifests(t *testing.T) {
	hostile := []string{
		"ZQX0-plain-token",
		"ZQX1\nkind: Secret\n",
		"ZQX2\n---\napiVersion: v1\nkind: ConfigMap",
		"ZQX3 # not a comment",
		"ZQX4 \"double\" 'single' `back`",
		"ZQX5 $(HOME) ${HOME} $$",
		"ZQX6: {a: [1, 2]}",
		"ZQX7\r\n\ttabs and CR",
		"ZQX8 ünïcödé ✓ \u2028 line separator",
		"ZQX9" + strings.Repeat("x", 4096),
	}
	// Only a round trip to check for these: they would be other types in
	// YAML without quotes.
	typed := []string{"yes", "no", "on", "null", "~", "0777", "1e3", "true", "", " padded "}
	for _, withEnvFile := range []bool{false, true} {
		src := project(t, "[notify]\nwebhook = \"https://hooks.example.com/ZQXHOOK\"\n")
		if withEnvFile {
			src = project(t, "env_file = \".env\"\n")
		}
		for i, v := range append(append([]string{}, hostile...), typed...) {
			src.Project.Env = append(src.Project.Env, config.EnvVar{Name: fmt.Sprintf("V%02d", i), Value: v})
		}
		for _, opts := range []Options{{}, {Secrets: true}, {Ordinal: true, Secrets: true, Gateway: "edge"}} {
			res := export(t, opts, src)
			public := string(res.Manifests())
			for _, w := range res.Warnings {
				public += w.Error()
			}
			for _, v := range hostile {
				if strings.Contains(public, v) || strings.Contains(public, v[:4]) || strings.Contains(public, strconv.Quote(v)[1:8]) {
					t.Errorf("%+v: the value %q is in the manifests:\n%s", opts, v, public)
				}
			}
			if strings.Contains(public, "ZQXHOOK") {
				t.Errorf("%+v: the webhook is in the manifests", opts)
			}
			var secrets []File
			for _, f := range res.Files {
				if f.Secret {
					secrets = append(secrets, f)
				}
			}
			if !opts.Secrets {
				if len(secrets) != 0 {
					t.Fatalf("a Secret without Options.Secrets: %v", secrets)
				}
				continue
			}
			if len(secrets) != 1 || secrets[0].Perm() != 0o600 || secrets[0].Name != "app.secret.yaml" {
				t.Fatalf("secret files: %+v", secrets)
			}
			objs := decodeAll(t, secrets[0].Data)
			s, ok := objs[0].(*corev1.Secret)
			if len(objs) != 1 || !ok || s.Name != "app-env" {
				t.Fatalf("the secret file holds %v", objs)
			}
			for _, e := range src.Project.Env {
				if got, ok := s.StringData[e.Name]; !ok || got != e.Value {
					t.Errorf("Secret's %s is %q, want %q", e.Name, got, e.Value)
				}
			}
			if len(s.StringData) != len(src.Project.Env) || len(s.Data) != 0 {
				t.Errorf("Secret holds %d values, want %d", len(s.StringData), len(src.Project.Env))
			}
		}
	}
}

// Each [env] key is read from Secret <name>-env by name; with an
// env_file, both are whole Secrets in envFrom, [env] first (env_file
// overrides it, as on a host), the env_file's optional.
func TestEnvComesFromSecrets(t *testing.T) {
	_, pod, _ := workload(t, export(t, Options{}, project(t, "[env]\nB = \"1\"\nA = \"2\"\n")))
	c := pod.Containers[0]
	for _, name := range []string{"A", "B"} {
		e, ok := envOf(c, name)
		if !ok || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			e.ValueFrom.SecretKeyRef.Name != "app-env" || e.ValueFrom.SecretKeyRef.Key != name {
			t.Errorf("%s: %+v", name, e)
		}
	}
	if len(c.EnvFrom) != 0 {
		t.Errorf("envFrom without env_file: %+v", c.EnvFrom)
	}

	_, pod, _ = workload(t, export(t, Options{}, project(t, "env_file = \".env\"\n[env]\nA = \"2\"\n")))
	c = pod.Containers[0]
	if _, ok := envOf(c, "A"); ok {
		t.Error("[env] in env, which would override env_file")
	}
	if len(c.EnvFrom) != 2 || c.EnvFrom[0].SecretRef.Name != "app-env" || c.EnvFrom[0].SecretRef.Optional != nil ||
		c.EnvFrom[1].SecretRef.Name != "app-env-file" || c.EnvFrom[1].SecretRef.Optional != nil {
		// Both required: a host does not start without its env_file.
		t.Errorf("envFrom: %+v", c.EnvFrom)
	}
}

func TestReplicasAreInstances(t *testing.T) {
	for _, n := range []int{1, 3, 7} {
		for _, ordinal := range []bool{false, true} {
			replicas, _, _ := workload(t, export(t, Options{Ordinal: ordinal}, project(t, "instances = "+strconv.Itoa(n)+"\n")))
			if replicas != int32(n) {
				t.Errorf("instances = %d, ordinal %v: replicas %d", n, ordinal, replicas)
			}
		}
	}
}

// A Deployment's pods have no instance number; a StatefulSet's have their
// ordinal, from the pod-index label through the downward API.
func TestInstanceNumber(t *testing.T) {
	src := project(t, "instances = 3\n")
	_, pod, obj := workload(t, export(t, Options{}, src))
	if _, ok := obj.(*appsv1.Deployment); !ok {
		t.Fatalf("without --ordinal: %T", obj)
	}
	if e, ok := envOf(pod.Containers[0], "BM2_APP_INSTANCE"); ok {
		t.Errorf("a Deployment sets BM2_APP_INSTANCE: %+v", e)
	}
	if strings.Contains(string(export(t, Options{}, src).Manifests()), "pod-index") {
		t.Error("a Deployment names the pod index")
	}

	res := export(t, Options{Ordinal: true}, src)
	_, pod, obj = workload(t, res)
	ss, ok := obj.(*appsv1.StatefulSet)
	if !ok {
		t.Fatalf("with --ordinal: %T", obj)
	}
	e, ok := envOf(pod.Containers[0], "BM2_APP_INSTANCE")
	if !ok || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.labels['apps.kubernetes.io/pod-index']" {
		t.Errorf("BM2_APP_INSTANCE: %+v", e)
	}
	// The StatefulSet's headless Service exists.
	var headless *corev1.Service
	for _, o := range decodeAll(t, res.Manifests()) {
		if s, ok := o.(*corev1.Service); ok && s.Name == ss.Spec.ServiceName {
			headless = s
		}
	}
	if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone || headless.Spec.Selector[LabelName] != "app" {
		t.Errorf("headless Service %q: %+v", ss.Spec.ServiceName, headless)
	}
}

func TestTerminationGracePeriodRoundsUp(t *testing.T) {
	for ms, want := range map[int]int64{1: 1, 999: 1, 1000: 1, 1001: 2, 1600: 2, 2000: 2, 3600000: 3600} {
		_, pod, _ := workload(t, export(t, Options{}, project(t, "stop_timeout_ms = "+strconv.Itoa(ms)+"\n")))
		if got := *pod.TerminationGracePeriodSeconds; got != want {
			t.Errorf("stop_timeout_ms = %d: terminationGracePeriodSeconds %d, want %d", ms, got, want)
		}
	}
	// The default, 1600 ms.
	if _, pod, _ := workload(t, export(t, Options{}, project(t, ""))); *pod.TerminationGracePeriodSeconds != 2 {
		t.Errorf("default: %d", *pod.TerminationGracePeriodSeconds)
	}
}

// With a health path, every probe is bm2's health check: a GET of the
// path on the port instance 0 answers it on (health_port in cluster
// mode, which the pod is told in BM2_HEALTH_PORT; the app's port in fork
// mode), and liveness is as often, as patient and as forgiving as bm2's
// check.
func TestHealthProbes(t *testing.T) {
	for _, c := range []struct {
		extra      string
		port       int
		healthEnv  string
		containers int // container ports
	}{
		{"instances = 2\nhealth_path = \"/healthz\"\nhealth_port = 3400\nhealth_interval_ms = 2500\nhealth_timeout_ms = 500\nhealth_failures = 4\n", 3400, "3400", 2},
		{"instances = 2\nexec_mode = \"fork\"\nhealth_path = \"/healthz\"\nhealth_interval_ms = 2500\nhealth_timeout_ms = 500\nhealth_failures = 4\n", 3000, "", 1},
	} {
		_, pod, _ := workload(t, export(t, Options{}, project(t, c.extra)))
		ct := pod.Containers[0]
		for name, p := range map[string]*corev1.Probe{"startup": ct.StartupProbe, "readiness": ct.ReadinessProbe, "liveness": ct.LivenessProbe} {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.IntValue() != c.port || p.TCPSocket != nil {
				t.Errorf("%q: %s probe %+v", c.extra, name, p)
			}
		}
		if l := ct.LivenessProbe; l.PeriodSeconds != 3 || l.TimeoutSeconds != 1 || l.FailureThreshold != 4 {
			t.Errorf("%q: liveness every %d s, %d s timeout, %d failures; want 3, 1, 4", c.extra, l.PeriodSeconds, l.TimeoutSeconds, l.FailureThreshold)
		}
		got := ""
		for _, e := range ct.Env {
			if e.Name == "BM2_HEALTH_PORT" {
				got = e.Value
			}
		}
		if got != c.healthEnv || len(ct.Ports) != c.containers {
			t.Errorf("%q: BM2_HEALTH_PORT %q, want %q; ports %+v", c.extra, got, c.healthEnv, ct.Ports)
		}
	}
}

// Without a health path, every probe is a TCP connect to the app's port;
// probeHandler with a path is an HTTP GET of it.
func TestProbes(t *testing.T) {
	h := probeHandler("", 3000)
	if h.TCPSocket == nil || h.TCPSocket.Port.IntValue() != 3000 || h.HTTPGet != nil || h.Exec != nil || h.GRPC != nil {
		t.Errorf("no health path: %+v", h)
	}
	h = probeHandler("/healthz", 3001)
	if h.HTTPGet == nil || h.HTTPGet.Path != "/healthz" || h.HTTPGet.Port.IntValue() != 3001 || h.TCPSocket != nil {
		t.Errorf("health path: %+v", h)
	}
	for _, mode := range []string{"cluster", "fork"} {
		_, pod, _ := workload(t, export(t, Options{}, project(t, "instances = 2\nexec_mode = \""+mode+"\"\n")))
		c := pod.Containers[0]
		for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
			if p == nil || p.TCPSocket == nil || p.TCPSocket.Port.IntValue() != 3000 || p.HTTPGet != nil {
				t.Errorf("%s: %s probe %+v", mode, name, p)
			}
		}
		if p := c.StartupProbe; p.PeriodSeconds*p.FailureThreshold < 60 {
			t.Errorf("%s: the startup probe gives the app %d s to listen, less than bm2's probe", mode, p.PeriodSeconds*p.FailureThreshold)
		}
	}
}

// In both modes every pod listens on the project's port (fork mode's
// port+i is a host matter), and the Service sends that port to it.
func TestPortsInBothModes(t *testing.T) {
	for _, mode := range []string{"cluster", "fork"} {
		res := export(t, Options{}, project(t, "instances = 3\nexec_mode = \""+mode+"\"\nport_env = [\"PORT\"]\n"))
		_, pod, _ := workload(t, res)
		c := pod.Containers[0]
		for _, name := range []string{"BM2_APP_PORT", "PORT"} {
			if e, _ := envOf(c, name); e.Value != "3000" {
				t.Errorf("%s: %s = %q", mode, name, e.Value)
			}
		}
		if e, _ := envOf(c, "BM2_EXEC_MODE"); e.Value != mode {
			t.Errorf("%s: BM2_EXEC_MODE = %q", mode, e.Value)
		}
		if c.Ports[0].ContainerPort != 3000 {
			t.Errorf("%s: container port %d", mode, c.Ports[0].ContainerPort)
		}
		svc := decodeAll(t, res.Manifests())[0].(*corev1.Service)
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 3000 || svc.Spec.Ports[0].TargetPort.IntValue() != 3000 || svc.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("%s: Service %+v", mode, svc.Spec)
		}
		if !strings.Contains(string(res.Manifests()), "# app: 3 x "+mode+" mode on port 3000") {
			t.Errorf("%s: the notes do not say what became of the mode", mode)
		}
	}
}

// NET_BIND_SERVICE, and the pod's unprivileged port start, only for a
// port below 1024, the project's or an extra one.
func TestLowPorts(t *testing.T) {
	for extra, want := range map[string]string{
		"port = 80\n":                      "80",
		"port = 1023\n":                    "1023",
		"port = 1024\n":                    "",
		"[sandbox]\nextra_ports = [443]\n": "443",
	} {
		text := strings.Replace(base, "port = 3000\n", "", 1) + extra
		if !strings.Contains(extra, "port = ") {
			text = base + extra
		}
		_, pod, _ := workload(t, export(t, Options{}, parse(t, "/etc/bm2/app.toml", text)))
		caps := pod.Containers[0].SecurityContext.Capabilities
		if len(caps.Drop) != 1 || caps.Drop[0] != "ALL" {
			t.Errorf("%q: drop %v", extra, caps.Drop)
		}
		var sysctl string
		for _, s := range pod.SecurityContext.Sysctls {
			if s.Name == "net.ipv4.ip_unprivileged_port_start" {
				sysctl = s.Value
			}
		}
		if want == "" {
			if len(caps.Add) != 0 || sysctl != "" {
				t.Errorf("%q: add %v, sysctl %q", extra, caps.Add, sysctl)
			}
			continue
		}
		if len(caps.Add) != 1 || caps.Add[0] != "NET_BIND_SERVICE" || sysctl != want {
			t.Errorf("%q: add %v, sysctl %q, want NET_BIND_SERVICE and %s", extra, caps.Add, sysctl, want)
		}
	}
}

// The sandbox in every export: never root, nothing to escalate to, a
// read-only root with emptyDirs where the app may write.
func TestSandbox(t *testing.T) {
	_, pod, _ := workload(t, export(t, Options{}, project(t, "[sandbox]\nwritable = [\"data\", \"/var/cache/app\"]\n")))
	c := pod.Containers[0]
	sc := c.SecurityContext
	if !*pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
		*sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || *pod.AutomountServiceAccountToken || *pod.EnableServiceLinks {
		t.Errorf("pod %+v\ncontainer %+v", pod.SecurityContext, sc)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	empty := map[string]bool{}
	for _, v := range pod.Volumes {
		empty[v.Name] = v.EmptyDir != nil
	}
	for _, p := range []string{"/tmp", "/var/lib/bm2/apps/app", "/srv/app/data", "/var/cache/app"} {
		if !empty[mounts[p]] {
			t.Errorf("%s is no emptyDir: mounts %v, volumes %v", p, mounts, empty)
		}
	}
	// A writable path that is writable already gets no second mount.
	_, dup, _ := workload(t, export(t, Options{}, project(t, "[sandbox]\nwritable = [\"/tmp\", \"/var/lib/bm2/apps/app\", \"/srv/x\", \"/srv/x/\"]\n")))
	paths := map[string]int{}
	for _, m := range dup.Containers[0].VolumeMounts {
		paths[m.MountPath]++
	}
	if len(paths) != 3 || paths["/tmp"] != 1 || paths["/var/lib/bm2/apps/app"] != 1 || paths["/srv/x"] != 1 {
		t.Errorf("mounts %v", paths)
	}
	if e, _ := envOf(c, "STATE_DIRECTORY"); e.Value != "/var/lib/bm2/apps/app" {
		t.Errorf("STATE_DIRECTORY = %q", e.Value)
	}
	// A writable path that holds the app, and compat mode: a writable
	// root, and the app's own tree is not hidden under an emptyDir.
	for _, extra := range []string{"[sandbox]\nwritable = [\".\"]\n", "[sandbox]\nmode = \"compat\"\n"} {
		_, pod, _ := workload(t, export(t, Options{}, project(t, extra)))
		c := pod.Containers[0]
		if *c.SecurityContext.ReadOnlyRootFilesystem {
			t.Errorf("%q: read-only root", extra)
		}
		for _, m := range c.VolumeMounts {
			if m.MountPath == "/srv/app" {
				t.Errorf("%q: an emptyDir hides the app", extra)
			}
		}
	}
	// A numeric account crosses the image boundary.
	_, pod, _ = workload(t, export(t, Options{}, project(t, "user = \"1000\"\ngroup = \"2000\"\n")))
	if *pod.SecurityContext.RunAsUser != 1000 || *pod.SecurityContext.RunAsGroup != 2000 {
		t.Errorf("runAs %d:%d", *pod.SecurityContext.RunAsUser, *pod.SecurityContext.RunAsGroup)
	}
}

// The container runs what ExecStart= runs, less bm2's wrapper, with every
// word kept as written through Kubernetes' $(VAR) expansion.
func TestCommandLine(t *testing.T) {
	_, pod, _ := workload(t, export(t, Options{}, project(t,
		"runtime = \"bun\"\nruntime_path = \"/usr/local/bin/bun\"\nruntime_args = [\"--smol\"]\nargs = [\"--name\", \"$(HOME)\", \"$$x$\"]\n")))
	c := pod.Containers[0]
	vars := map[string]string{"HOME": "/root"}
	var got []string
	for _, w := range append(append([]string{}, c.Command...), c.Args...) {
		got = append(got, expand(w, vars))
	}
	want := []string{"/usr/local/bin/bun", "--smol", "main.js", "--name", "$(HOME)", "$$x$"}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || c.WorkingDir != "/srv/app" {
		t.Errorf("runs %q in %s, want %q in /srv/app", got, c.WorkingDir, want)
	}
}

// expand is Kubernetes' expansion of command, args and env values
// (third_party/forked/golang/expansion): "$$" is "$", "$(NAME)" a
// defined variable's value, anything else as it is.
func expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '(':
			end := strings.IndexByte(s[i:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+end+1])
			}
			i += end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func TestResources(t *testing.T) {
	for extra, want := range map[string][4]string{ // limits cpu, memory; requests cpu, memory
		"":                        {},
		"memory_max = \"512M\"\n": {"", "512Mi", "", "512Mi"},
		"memory_max = \"1G\"\nmemory_high = \"768M\"\n": {"", "1Gi", "", "768Mi"},
		"memory_max = \"1G\"\nmemory_high = \"2G\"\n":   {"", "1Gi", "", "1Gi"},
		"memory_high = \"300M\"\n":                      {"", "", "", "300Mi"},
		"memory_max = \"infinity\"\n":                   {},
		"memory_max = \"1048576\"\n":                    {"", "1048576", "", "1048576"},
		"cpu_quota = \"150%\"\n":                        {"1500m", "", "1500m", ""},
		"cpu_quota = \"200%\"\n":                        {"2", "", "2", ""},
		"cpu_quota = \"0.01%\"\n":                       {"1m", "", "1m", ""},
		"cpu_quota = \"12.34%\"\n":                      {"124m", "", "124m", ""},
	} {
		_, pod, _ := workload(t, export(t, Options{}, project(t, "[resources]\n"+extra)))
		r := pod.Containers[0].Resources
		q := func(l corev1.ResourceList, n corev1.ResourceName) string {
			if v, ok := l[n]; ok {
				return v.String()
			}
			return ""
		}
		got := [4]string{q(r.Limits, corev1.ResourceCPU), q(r.Limits, corev1.ResourceMemory), q(r.Requests, corev1.ResourceCPU), q(r.Requests, corev1.ResourceMemory)}
		if got != want {
			t.Errorf("%q: %v, want %v", extra, got, want)
		}
	}
}

// What cannot run in a pod as the file says is refused, each problem
// naming the file, the line and the key.
func TestUnmappableProjectsAreRefused(t *testing.T) {
	for extra, want := range map[string]string{
		"runtime_path = \"/home/alice/.bun/bin/bun\"\n": "/etc/bm2/app.toml:5: runtime_path: /home/alice/.bun/bin/bun is under /home, which an image does not have",
		"runtime_path = \"/root/.nvm/node\"\n":          "/etc/bm2/app.toml:5: runtime_path: /root/.nvm/node is under /root",
		"runtime_path = \"/tmp/node\"\n":                "/etc/bm2/app.toml:5: runtime_path: /tmp/node is under /tmp",
		"user = \"root\"\n":                             "/etc/bm2/app.toml:5: user: \"root\": the pod runs with runAsNonRoot",
		"user = \"0\"\n":                                "/etc/bm2/app.toml:5: user: \"0\": the pod runs with runAsNonRoot",
		"[resources]\nmemory_max = \"50%\"\n":           "/etc/bm2/app.toml:6: resources.memory_max: \"50%\" is a share of the host's memory",
		"[resources]\nmemory_high = \"5%\"\n":           "/etc/bm2/app.toml:6: resources.memory_high: \"5%\" is a share of the host's memory",
		"[resources]\nmemory_max = \"15E\"\n":           "/etc/bm2/app.toml:6: resources.memory_max: \"15E\": more than Kubernetes can count",
		"script = \"/home/alice/app/main.js\"\n":        "/etc/bm2/app.toml:2: script: /home/alice/app/main.js is under /home",
	} {
		text := base + extra
		if strings.HasPrefix(extra, "script") {
			text = strings.Replace(base, "script = \"main.js\"\n", "", 1)
			text = text[:strings.Index(text, "cwd")] + extra + text[strings.Index(text, "cwd"):] // line 2
		}
		_, err := Export([]Source{parse(t, "/etc/bm2/app.toml", text)}, Options{Image: testImage})
		var es config.Errors
		if !errors.As(err, &es) || len(es) != 1 || !errors.Is(es[0], ErrUnmappable) || !strings.HasPrefix(es[0].Error(), want) {
			t.Errorf("%q: %v\nwant %s...", extra, err, want)
		}
	}
	// cwd: a project dir in a home (a user-scope project's), where the
	// file sets no cwd: the key, without a line.
	p, err := config.Parse("/home/alice/api/bm2.toml", []byte("name = \"api\"\nscript = \"a.js\"\nport = 3000\n"), config.Options{NumCPU: 2, Cwd: "/home/alice/api", AnyName: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Export([]Source{{Project: p, File: "/home/alice/api/bm2.toml", Lines: map[string]int{"name": 1}}}, Options{Image: testImage})
	if err == nil || !strings.HasPrefix(err.Error(), "/home/alice/api/bm2.toml: cwd: /home/alice/api is under /home, which an image does not have: set cwd to where the image holds the app") {
		t.Errorf("cwd in a home: %v", err)
	}
	// A private part this process may not read: the [env] names are in it.
	unread := project(t, "")
	unread.Project.PrivateUnread = true
	_, err = Export([]Source{unread}, Options{Image: testImage})
	if err == nil || !strings.HasPrefix(err.Error(), "/etc/bm2/private/app.toml: cannot be read, so the names of [env] are not known: run the export as root") {
		t.Errorf("unreadable private part: %v", err)
	}
	// Every problem of every project at once, in file and line order.
	_, err = Export([]Source{
		project(t, "user = \"root\"\nruntime_path = \"/tmp/bun\"\n"),
		parse(t, "/etc/bm2/b.toml", strings.Replace(base, "\"app\"", "\"b\"", 1)+"[resources]\nmemory_max = \"9%\"\n"),
	}, Options{Image: testImage})
	if got := fmt.Sprint(err); strings.Count(got, "\n") != 2 || !strings.HasPrefix(got, "/etc/bm2/app.toml:5: user:") ||
		!strings.Contains(got, "\n/etc/bm2/app.toml:6: runtime_path:") || !strings.Contains(got, "\n/etc/bm2/b.toml:6: resources.memory_max:") {
		t.Errorf("several problems:\n%v", err)
	}
}

func TestNames(t *testing.T) {
	named := func(name string) Source {
		return parse(t, "/etc/bm2/"+name+".toml", strings.Replace(base, "\"app\"", strconv.Quote(name), 1))
	}
	res := export(t, Options{}, named("my_api"))
	_, _, obj := workload(t, res)
	d := obj.(*appsv1.Deployment)
	if d.Name != "my-api" || d.Labels[LabelName] != "my_api" || d.Labels[LabelManagedBy] != "bm2" ||
		d.Spec.Selector.MatchLabels[LabelName] != "my_api" || d.Spec.Template.Labels[LabelName] != "my_api" {
		t.Errorf("my_api: %s %v %v", d.Name, d.Labels, d.Spec.Selector.MatchLabels)
	}
	for name, want := range map[string]string{
		"3d":                    "name: \"3d\" cannot name a Kubernetes Service, whose name starts with a letter",
		"api-":                  "name: \"api-\" cannot name Kubernetes objects, whose names end with a letter or digit",
		strings.Repeat("a", 64): "is 64 bytes long: a Kubernetes Service's name takes at most 63",
	} {
		_, err := Export([]Source{named(name)}, Options{Image: testImage})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "/etc/bm2/"+name+".toml:1: name: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	long := strings.Repeat("a", 53)
	if _, err := Export([]Source{named(long)}, Options{Image: testImage}); err != nil {
		t.Errorf("53 bytes without --ordinal: %v", err)
	}
	if _, err := Export([]Source{named(long)}, Options{Image: testImage, Ordinal: true}); err == nil || !strings.Contains(err.Error(), "a StatefulSet's name takes at most 52") {
		t.Errorf("53 bytes with --ordinal: %v", err)
	}
	_, err := Export([]Source{named("a_b"), named("a-b")}, Options{Image: testImage})
	if err == nil || !strings.Contains(err.Error(), `"a-b" and "a_b" are both "a-b"`) {
		t.Errorf("a_b and a-b: %v", err)
	}
}

// Settings with no equivalent are left out with a warning that names the
// file, the line and the key, and the manifests say so too.
func TestDroppedSettingsWarn(t *testing.T) {
	res := export(t, Options{}, source(t, "legacy"))
	want := []string{"user", "group", "instances", "reuseport?", "restart_delay_ms", "restart_delay_max_ms", "max_restarts", "restart_schedule",
		"wants", "requires", "log_rate_limit_burst", "log_level_prefix", "notify.webhook", "resources.cpu_weight", "resources.tasks_max", "resources.limit_nofile"}
	var keys []string
	last := 0
	for _, w := range res.Warnings {
		if !errors.Is(w, ErrDropped) || w.File != "/etc/bm2/legacy.toml" || w.Line < last {
			t.Errorf("warning %v", w)
		}
		last = w.Line
		keys = append(keys, w.Key)
		if !strings.Contains(string(res.Manifests()), "# - "+w.File+":"+strconv.Itoa(w.Line)+": "+w.Key+": ") {
			t.Errorf("the manifests do not say %q", w)
		}
	}
	for _, k := range want {
		if strings.HasSuffix(k, "?") {
			continue // a note, not a warning: it changes nothing in a pod
		}
		if !strings.Contains(" "+strings.Join(keys, " ")+" ", " "+k+" ") {
			t.Errorf("no warning for %s (warnings for %v)", k, keys)
		}
	}
	if !strings.Contains(string(res.Manifests()), "reuseport = \"preload\" is left out") {
		t.Error("no note on reuseport = \"preload\"")
	}
	// A project with nothing to drop has no warning.
	if res := export(t, Options{}, project(t, "")); len(res.Warnings) != 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
}

func TestOptions(t *testing.T) {
	src := project(t, "")
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{}, "image: required: the image that holds the app"},
		{Options{Image: "Bad Image"}, `image "Bad Image": not an image reference`},
		{Options{Image: "api", Namespace: "Prod"}, `namespace "Prod": not a namespace name`},
		{Options{Image: "api", Gateway: "a/b/c"}, `gateway "a/b/c": want NAME or NAMESPACE/NAME`},
		{Options{Image: "api", Hostnames: []string{"a.example.com"}}, "need --gateway NAME"},
		{Options{Image: "api", Gateway: "edge", Hostnames: []string{"10.0.0.1"}}, "not IP addresses"},
		{Options{Image: "api", Gateway: "edge", Hostnames: []string{"x;"}}, `server-name "x;"`},
		{Options{Image: "api", Gateway: "edge", PathPrefix: "apps"}, `path-prefix "apps": must start with /`},
	} {
		_, err := Export([]Source{src}, c.opts)
		var oe *OptionError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opts, err, c.want)
		}
	}
	for _, img := range []string{"api", "api:1.0", "registry.example.com:5000/team/api:v1.2-rc.1", "ghcr.io/a/b@sha256:" + strings.Repeat("0", 64), "[::1]:5000/api"} {
		if _, err := Export([]Source{src}, Options{Image: img}); err != nil {
			t.Errorf("image %s: %v", img, err)
		}
	}
	if _, err := Routes([]Source{src}, Options{}); err == nil || !strings.Contains(err.Error(), "gateway: required") {
		t.Errorf("Routes without a gateway: %v", err)
	}
}

// The routes: the Gateway as parent, the hostnames, each project at its
// path below the prefix, to its Service's port; several projects need a
// prefix.
func TestRoutes(t *testing.T) {
	fk := source(t, "fk")
	api := source(t, "api")
	out, err := Routes([]Source{fk, api}, Options{Gateway: "infra/edge", Hostnames: []string{"Example.COM"}, PathPrefix: "/apps"})
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]*gwv1.HTTPRoute{}
	for _, o := range decodeAll(t, out) {
		r := o.(*gwv1.HTTPRoute)
		routes[r.Name] = r
	}
	for name, port := range map[string]int32{"api": 3000, "fk": 4000} {
		r := routes[name]
		if r == nil {
			t.Fatalf("no route %s", name)
		}
		pr := r.Spec.ParentRefs
		rule := r.Spec.Rules[0]
		if len(pr) != 1 || pr[0].Name != "edge" || pr[0].Namespace == nil || *pr[0].Namespace != "infra" ||
			len(r.Spec.Hostnames) != 1 || r.Spec.Hostnames[0] != "example.com" ||
			*rule.Matches[0].Path.Value != "/apps/"+name+"/" || *rule.Matches[0].Path.Type != gwv1.PathMatchPathPrefix ||
			rule.BackendRefs[0].Name != gwv1.ObjectName(name) || *rule.BackendRefs[0].Port != gwv1.PortNumber(port) {
			t.Errorf("%s: %+v", name, r.Spec)
		}
	}
	if _, err := Routes([]Source{fk, api}, Options{Gateway: "edge"}); err == nil || !strings.Contains(err.Error(), "several projects need --path-prefix") {
		t.Errorf("two projects, no prefix: %v", err)
	}
	// A route alone is not refused for what only the workload would be.
	if _, err := Routes([]Source{project(t, "user = \"root\"\n")}, Options{Gateway: "edge"}); err != nil {
		t.Errorf("a route for a root project: %v", err)
	}
}

// The file a project came from is the user's path: a control character
// in it is escaped in the comments, so the stream stays YAML and nothing
// raw reaches a terminal.
func TestHostilePathIsEscaped(t *testing.T) {
	res := export(t, Options{}, parse(t, "/srv/a\x1b[2J\u009b/app.toml", base))
	out := res.Manifests()
	if bytes.ContainsAny(out, "\x1b\u009b") {
		t.Fatalf("a control character reached the manifests:\n%q", out)
	}
	if !bytes.Contains(out, []byte(`/srv/a\x1b[2J`)) {
		t.Errorf("the path is not named, escaped:\n%s", out)
	}
	for _, doc := range documents(t, out) {
		if _, err := decodeStrict(doc); err != nil {
			t.Errorf("%v\n%s", err, doc)
		}
	}
}

// worker parses base without its port (a worker) plus extra lines as
// /etc/bm2/app.toml.
func worker(t *testing.T, extra string) Source {
	t.Helper()
	return parse(t, "/etc/bm2/app.toml", strings.Replace(base, "port = 3000\n", "", 1)+extra)
}

// A worker (no port) is a workload alone: no Service, no containerPort,
// no probe, no BM2_APP_PORT, and a note that says so; a rollout never
// runs more than its replicas.
func TestWorker(t *testing.T) {
	src := worker(t, "instances = 3\n[env]\nQUEUE = \"x\"\n")
	if !src.Project.IsWorker() {
		t.Fatalf("mode %s", src.Project.Mode)
	}
	res := export(t, Options{}, src)
	if len(res.Files) != 1 || strings.Join(res.Files[0].Kinds, " ") != "Deployment" {
		t.Fatalf("files %+v", res.Files)
	}
	out := string(res.Manifests())
	for _, o := range decodeAll(t, res.Manifests()) {
		if s, ok := o.(*corev1.Service); ok {
			t.Errorf("a worker has a Service: %+v", s)
		}
	}
	if !strings.Contains(out, "# app: a worker, 3 replicas, no port: no Service.") {
		t.Errorf("no note that the project is a worker:\n%s", out)
	}
	var body []string // the objects, not the comments
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "#") {
			body = append(body, l)
		}
	}
	for _, s := range []string{"ports:", "containerPort", "BM2_APP_PORT", "Probe:", "NET_BIND_SERVICE", "ip_unprivileged_port_start", "kind: Service"} {
		if strings.Contains(strings.Join(body, "\n"), s) {
			t.Errorf("a worker's manifests have %q:\n%s", s, out)
		}
	}
	replicas, pod, obj := workload(t, res)
	c := pod.Containers[0]
	if replicas != 3 || len(c.Ports) != 0 || c.StartupProbe != nil || c.ReadinessProbe != nil || c.LivenessProbe != nil {
		t.Errorf("replicas %d, ports %+v, probes %v %v %v", replicas, c.Ports, c.StartupProbe, c.ReadinessProbe, c.LivenessProbe)
	}
	if e, ok := envOf(c, "BM2_APP_PORT"); ok {
		t.Errorf("BM2_APP_PORT: %+v", e)
	}
	if e, _ := envOf(c, "BM2_EXEC_MODE"); e.Value != "worker" {
		t.Errorf("BM2_EXEC_MODE = %q", e.Value)
	}
	if e, _ := envOf(c, "QUEUE"); e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "app-env" {
		t.Errorf("[env]: %+v", e)
	}
	if !*c.SecurityContext.ReadOnlyRootFilesystem || len(c.SecurityContext.Capabilities.Add) != 0 || pod.SecurityContext.Sysctls != nil {
		t.Errorf("sandbox: %+v %+v", c.SecurityContext, pod.SecurityContext)
	}
	ru := obj.(*appsv1.Deployment).Spec.Strategy.RollingUpdate
	if ru.MaxSurge.IntValue() != 0 || ru.MaxUnavailable.IntValue() != 1 {
		t.Errorf("rollout: maxSurge %v, maxUnavailable %v; want 0 and 1 (bm2 reload has no surge for a worker)", ru.MaxSurge, ru.MaxUnavailable)
	}

	// --ordinal: a StatefulSet whose serviceName names a Service the
	// file does not create, and says so.
	res = export(t, Options{Ordinal: true}, src)
	if k := strings.Join(res.Files[0].Kinds, " "); k != "StatefulSet" {
		t.Errorf("--ordinal: kinds %s", k)
	}
	_, pod, obj = workload(t, res)
	if ss := obj.(*appsv1.StatefulSet); ss.Spec.ServiceName != "app-headless" {
		t.Errorf("serviceName %q", ss.Spec.ServiceName)
	}
	if e, _ := envOf(pod.Containers[0], "BM2_APP_INSTANCE"); e.ValueFrom == nil {
		t.Errorf("--ordinal: BM2_APP_INSTANCE %+v", e)
	}
	if out := string(res.Manifests()); !strings.Contains(out, "# serviceName names Service app-headless, which this file does not create") {
		t.Errorf("--ordinal: no note on serviceName:\n%s", out)
	}

	// --gateway: no route for the worker, a note; the other project has
	// its route, and being the only one needs no --path-prefix.
	api := source(t, "api")
	res = export(t, Options{Gateway: "edge"}, src, api)
	for _, f := range res.Files {
		want := map[string]string{"app": "Deployment", "api": "Service Deployment HTTPRoute"}[f.Project]
		if k := strings.Join(f.Kinds, " "); k != want {
			t.Errorf("--gateway: %s: kinds %s, want %s", f.Project, k, want)
		}
		if f.Project == "app" && !strings.Contains(string(f.Data), "# No HTTPRoute to Gateway edge: a worker has no port") {
			t.Errorf("--gateway: no note on the route:\n%s", f.Data)
		}
	}
	// A route alone is refused, naming the file and the project.
	_, err := Routes([]Source{src}, Options{Gateway: "edge"})
	var es config.Errors
	if !errors.As(err, &es) || len(es) != 1 || !errors.Is(es[0], ErrUnmappable) ||
		es[0].Error() != "/etc/bm2/app.toml: port: not set: app is a worker, which serves nothing an HTTPRoute could send requests to; leave it out" {
		t.Errorf("Routes of a worker: %v", err)
	}
}

// A worker's health check is its probes, a GET on its health port, the
// only port the container declares with [sandbox] extra_ports.
func TestWorkerHealth(t *testing.T) {
	res := export(t, Options{}, worker(t, "instances = 2\nhealth_path = \"/healthz\"\nhealth_port = 3500\n[sandbox]\nextra_ports = [80]\n"))
	_, pod, _ := workload(t, res)
	c := pod.Containers[0]
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.IntValue() != 3500 || p.TCPSocket != nil {
			t.Errorf("%s probe %+v", name, p)
		}
	}
	var ports []string
	for _, p := range c.Ports {
		ports = append(ports, fmt.Sprintf("%s=%d", p.Name, p.ContainerPort))
	}
	if got := strings.Join(ports, " "); got != "extra-80=80 health=3500" {
		t.Errorf("container ports %s", got)
	}
	if e, _ := envOf(c, "BM2_HEALTH_PORT"); e.Value != "3500" {
		t.Errorf("BM2_HEALTH_PORT = %q", e.Value)
	}
	if _, ok := envOf(c, "BM2_APP_PORT"); ok {
		t.Error("BM2_APP_PORT is set")
	}
	// Port 80, an extra one, is below 1024: the pod may bind from 80 up.
	if len(c.SecurityContext.Capabilities.Add) != 1 || len(pod.SecurityContext.Sysctls) != 1 || pod.SecurityContext.Sysctls[0].Value != "80" {
		t.Errorf("low extra port: %+v %+v", c.SecurityContext.Capabilities, pod.SecurityContext.Sysctls)
	}
	for _, o := range decodeAll(t, res.Manifests()) {
		if _, ok := o.(*corev1.Service); ok {
			t.Error("a worker with a health check has a Service")
		}
	}
}
