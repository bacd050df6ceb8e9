package kube

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The labels of every object, and the selectors made of them.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "bm2"
)

// The probes (see probeHandler). bm2's probe looks every 500 ms for 60 s
// from an instance coming online; the kubelet probes once a second at
// most.
const (
	startupWindow    = 60 // seconds the app has to listen, as bm2's probe gives it
	readinessPeriod  = 2
	readinessFails   = 2
	livenessPeriod   = 10
	livenessFails    = 3
	probeTimeout     = 2
	portName         = "http"
	healthPortName   = "health"
	stateDirTemplate = "/var/lib/bm2/apps/"
)

// StateDirectory is where systemd's StateDirectory= puts the project's
// state (bm2@.service: bm2/apps/<name>), and what STATE_DIRECTORY says;
// an emptyDir there in a pod.
func StateDirectory(project string) string { return stateDirTemplate + project }

func (m *model) labels() map[string]string {
	return map[string]string{LabelName: m.p.Name, LabelManagedBy: ManagedBy}
}

func (m *model) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: m.o.Namespace, Labels: m.labels()}
}

// EnvSecret is the Secret that holds a project's [env]: <name>-env.
func EnvSecret(project string) string { return objectName(project) + "-env" }

func (m *model) envSecret() string     { return EnvSecret(m.p.Name) }
func (m *model) envFileSecret() string { return m.name + "-env-file" }
func (m *model) headless() string      { return m.name + "-headless" }

// service is the ClusterIP Service in front of the replicas: the
// project's port, to the same port of each pod.
func (m *model) service() *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: m.meta(m.name),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: m.labels(),
			Ports:    m.servicePorts(),
		},
	}
}

// headlessService is the Service a StatefulSet names (serviceName): no
// cluster IP, a DNS name per pod (<name>-0.<name>-headless).
func (m *model) headlessService() *corev1.Service {
	s := m.service()
	s.Name = m.headless()
	s.Spec.ClusterIP = corev1.ClusterIPNone
	return s
}

func (m *model) servicePorts() []corev1.ServicePort {
	port := int32(m.p.Port)
	return []corev1.ServicePort{{Name: portName, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}}
}

func (m *model) selector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: m.labels()}
}

// deployment is the project's instances as identical replicas.
func (m *model) deployment() *appsv1.Deployment {
	// bm2 reload: a surge instance serves before the first one restarts,
	// and the project never has fewer than N.
	surge, unavailable := intstr.FromInt32(1), intstr.FromInt32(0)
	if m.p.IsWorker() {
		// bm2 reload restarts a worker's instances one at a time, with
		// no surge: never more than N run at once, so that a cron job or
		// a bot of one instance never runs twice.
		surge, unavailable = intstr.FromInt32(0), intstr.FromInt32(1)
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: m.meta(m.name),
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(m.p.Instances)),
			Selector: m.selector(),
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxSurge:       &surge,
					MaxUnavailable: &unavailable,
				},
			},
			MinReadySeconds: seconds(m.p.MinUptime),
			Template:        m.podTemplate(),
		},
	}
}

// statefulSet is the project's instances with numbers: pod i is
// <name>-i, and BM2_APP_INSTANCE is i. Its serviceName is the headless
// Service's, a worker's too, which has none (see explain): serviceName
// cannot change on a StatefulSet, and Kubernetes does not require the
// Service to exist.
func (m *model) statefulSet() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: m.meta(m.name),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    new(int32(m.p.Instances)),
			Selector:    m.selector(),
			ServiceName: m.headless(),
			// bm2 starts every instance at once, not one after the other.
			PodManagementPolicy: appsv1.ParallelPodManagement,
			MinReadySeconds:     seconds(m.p.MinUptime),
			Template:            m.podTemplate(),
		},
	}
}

// seconds is d in whole seconds, rounded up: a grace period or a wait is
// never shorter than the project says.
func seconds(d time.Duration) int32 {
	return int32(min(math.MaxInt32, (d+time.Second-1)/time.Second))
}

// TerminationGracePeriod is stop_timeout_ms as terminationGracePeriodSeconds:
// SIGTERM, then SIGKILL that many seconds later, rounded up.
func TerminationGracePeriod(p *config.Project) int64 { return int64(seconds(p.StopTimeout)) }

func (m *model) podTemplate() corev1.PodTemplateSpec {
	p := m.p
	sc := &corev1.PodSecurityContext{
		RunAsNonRoot:   new(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if isNumber(p.User) {
		sc.RunAsUser = new(mustInt64(p.User))
	}
	if isNumber(p.Group) {
		sc.RunAsGroup = new(mustInt64(p.Group))
	}
	if m.lowPort() {
		// CAP_NET_BIND_SERVICE (container) reaches a process that is not
		// root only as a file capability; this safe sysctl of the pod's
		// own network namespace lets it bind the port.
		sc.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: strconv.Itoa(m.lowestPort())}}
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: m.labels()},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: new(TerminationGracePeriod(p)),
			// The app does not talk to the cluster's API, and its
			// environment is bm2's and the project's alone (no
			// <SERVICE>_PORT variables for every Service around).
			AutomountServiceAccountToken: new(false),
			EnableServiceLinks:           new(false),
			SecurityContext:              sc,
			Containers:                   []corev1.Container{m.container()},
			Volumes:                      m.volumes(),
		},
	}
}

func mustInt64(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// container runs what the instance's ExecStart= runs (less bm2's run
// wrapper): the runtime, runtime_args, the script and args, in cwd.
func (m *model) container() corev1.Container {
	p := m.p
	args := append(append(append([]string{}, p.RuntimeArgs...), p.Script), p.Args...)
	for i, a := range args {
		args[i] = literal(a)
	}
	// A worker listens on no port of its own: no containerPort, and no
	// probe unless it has a health check.
	var ports []corev1.ContainerPort
	var check *corev1.ProbeHandler
	if !p.IsWorker() {
		ports = append(ports, corev1.ContainerPort{Name: portName, ContainerPort: int32(p.Port), Protocol: corev1.ProtocolTCP})
		check = new(probeHandler("", p.Port))
	}
	for _, n := range p.Sandbox.ExtraPorts {
		ports = append(ports, corev1.ContainerPort{Name: "extra-" + strconv.Itoa(n), ContainerPort: int32(n), Protocol: corev1.ProtocolTCP})
	}
	caps := &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	if m.lowPort() {
		caps.Add = []corev1.Capability{"NET_BIND_SERVICE"}
	}
	// The health check, where the project has one: the same GET, on the
	// port instance 0 answers it on (every pod is an instance 0), as
	// often and as patient as bm2's check for liveness.
	livePeriod, liveTimeout, liveFails := int32(livenessPeriod), int32(probeTimeout), int32(livenessFails)
	if p.HealthChecked() {
		hp := p.HealthPort(0)
		if hp != p.Port {
			ports = append(ports, corev1.ContainerPort{Name: healthPortName, ContainerPort: int32(hp), Protocol: corev1.ProtocolTCP})
		}
		check = new(probeHandler(p.Health.Path, hp))
		livePeriod = ceilSeconds(p.Health.Interval)
		liveTimeout = ceilSeconds(p.Health.Timeout)
		liveFails = int32(p.Health.Failures)
	}
	c := corev1.Container{
		Name:       m.name,
		Image:      m.o.Image,
		Command:    []string{literal(p.RuntimeCommand())},
		Args:       args,
		WorkingDir: p.Cwd,
		Ports:      ports,
		Env:        m.env(),
		EnvFrom:    m.envFrom(),
		Resources:  m.resources(),
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: new(false),
			ReadOnlyRootFilesystem:   new(!m.writableRoot()),
			Capabilities:             caps,
		},
		VolumeMounts: m.mounts(),
	}
	if check != nil {
		c.StartupProbe = &corev1.Probe{ProbeHandler: *check, PeriodSeconds: 1, FailureThreshold: startupWindow,
			TimeoutSeconds: 1}
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: *check, PeriodSeconds: readinessPeriod, FailureThreshold: readinessFails,
			TimeoutSeconds: probeTimeout}
		c.LivenessProbe = &corev1.Probe{ProbeHandler: *check, PeriodSeconds: livePeriod, FailureThreshold: liveFails,
			TimeoutSeconds: liveTimeout}
	}
	return c
}

// probeHandler is how the kubelet asks whether the app is up: an HTTP
// GET of healthPath on port when the project names a health path, else
// a TCP connect to port (the app listens: what bm2's own probe waits
// for). A TCP connect succeeds while the kernel accepts, even when the
// app's event loop is stuck; a health path answers only when the app
// does.
func probeHandler(healthPath string, port int) corev1.ProbeHandler {
	if healthPath != "" {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: healthPath, Port: intstr.FromInt32(int32(port))}}
	}
	return corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}
}

// env is what the instance's Environment= lines give it, in their order:
// BM2_APP_NAME, BM2_APP_INSTANCE (a StatefulSet's pods only), BM2_APP_PORT
// and port_env (every pod has the whole port: the project's; a worker has
// neither), BM2_HEALTH_PORT, BM2_EXEC_MODE, STATE_DIRECTORY; then each [env] key from its Secret when there is no
// env_file (with one, [env] comes through envFrom, see envFrom).
func (m *model) env() []corev1.EnvVar {
	p := m.p
	port := strconv.Itoa(p.Port)
	env := []corev1.EnvVar{{Name: "BM2_APP_NAME", Value: literal(p.Name)}}
	if m.o.Ordinal {
		env = append(env, corev1.EnvVar{Name: "BM2_APP_INSTANCE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + appsv1.PodIndexLabel + "']"},
		}})
	}
	if !p.IsWorker() {
		env = append(env, corev1.EnvVar{Name: "BM2_APP_PORT", Value: port})
		for _, name := range p.PortEnv {
			env = append(env, corev1.EnvVar{Name: name, Value: port})
		}
	}
	if p.HealthChecked() && p.Health.Port != 0 {
		env = append(env, corev1.EnvVar{Name: "BM2_HEALTH_PORT", Value: strconv.Itoa(p.HealthPort(0))})
	}
	env = append(env,
		corev1.EnvVar{Name: "BM2_EXEC_MODE", Value: string(p.Mode)},
		corev1.EnvVar{Name: "STATE_DIRECTORY", Value: literal(StateDirectory(p.Name))},
	)
	if p.EnvFile == "" {
		for _, e := range p.Env {
			env = append(env, corev1.EnvVar{Name: e.Name, ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: m.envSecret()}, Key: e.Name},
			}})
		}
	}
	return env
}

// envFrom is [env] and env_file when the project has an env_file: on a
// host env_file overrides [env], and in a pod a later envFrom source
// overrides an earlier one while env overrides them all, so both are
// whole Secrets here, [env] first; BM2_* (env) still win, as on a host.
// The env_file's Secret is required, as the file is on a host (a missing
// env_file stops the start): the pod waits for it, never starts without.
func (m *model) envFrom() []corev1.EnvFromSource {
	if m.p.EnvFile == "" {
		return nil
	}
	var out []corev1.EnvFromSource
	if len(m.p.Env) > 0 {
		out = append(out, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: m.envSecret()}}})
	}
	return append(out, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: m.envFileSecret()}}})
}

// resources: memory_max and cpu_quota are the limits. The requests, what
// the scheduler reserves, are the limits too (a missing request would be
// the limit anyway), except that memory_high, where systemd starts to
// reclaim, is the memory request when it is set: the app's working set,
// with memory_max above it as the hard stop.
func (m *model) resources() corev1.ResourceRequirements {
	r := m.p.Resources
	var out corev1.ResourceRequirements
	put := func(l *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if *l == nil {
			*l = corev1.ResourceList{}
		}
		(*l)[name] = q
	}
	limit, _ := memoryQuantity(r.MemoryMax)
	request, _ := memoryQuantity(r.MemoryHigh)
	if limit != nil {
		put(&out.Limits, corev1.ResourceMemory, *limit)
		if request == nil || request.Cmp(*limit) > 0 {
			request = limit
		}
	}
	if request != nil {
		put(&out.Requests, corev1.ResourceMemory, *request)
	}
	if cpu := cpuQuantity(r.CPUQuota); cpu != nil {
		put(&out.Limits, corev1.ResourceCPU, *cpu)
		put(&out.Requests, corev1.ResourceCPU, *cpu)
	}
	return out
}

// memoryQuantity is a systemd size (config's: bytes with a base-1024
// suffix) as a Kubernetes quantity; nil for none ("" or "infinity").
// A percentage is not a size here (check refuses it).
func memoryQuantity(s string) (*resource.Quantity, error) {
	if s == "" || s == "infinity" || strings.HasSuffix(s, "%") {
		return nil, nil
	}
	n, suffix := s, ""
	if last := s[len(s)-1]; last < '0' || last > '9' {
		n, suffix = s[:len(s)-1], string(last)+"i"
	}
	q, err := resource.ParseQuantity(n + suffix)
	if err != nil {
		return nil, fmt.Errorf("not a size Kubernetes takes: %v", err)
	}
	if _, ok := q.AsInt64(); !ok {
		return nil, fmt.Errorf("more than Kubernetes can count (%d bytes at most)", int64(math.MaxInt64))
	}
	return &q, nil
}

// cpuQuantity is a CPUQuota= percentage as CPU: "150%" is 1500m, rounded
// up to the millicore Kubernetes counts in; nil for none.
func cpuQuantity(s string) *resource.Quantity {
	pct, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if s == "" || err != nil || pct <= 0 {
		return nil
	}
	// Two decimals at most (config): count in hundredths to round once.
	hundredths := int64(math.Round(pct * 100))
	milli := (hundredths + 9) / 10
	return resource.NewMilliQuantity(max(1, milli), resource.DecimalSI)
}

// The volumes: /tmp (PrivateTmp=), the state directory (StateDirectory=)
// and each [sandbox] writable path that does not hold the app
// (ReadWritePaths=), each an emptyDir, since the root file system is
// read-only.
func (m *model) volumes() []corev1.Volume {
	var out []corev1.Volume
	for _, v := range m.writableDirs() {
		out = append(out, corev1.Volume{Name: v.name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	return out
}

func (m *model) mounts() []corev1.VolumeMount {
	var out []corev1.VolumeMount
	for _, v := range m.writableDirs() {
		out = append(out, corev1.VolumeMount{Name: v.name, MountPath: v.path})
	}
	return out
}

type dir struct{ name, path string }

func (m *model) writableDirs() []dir {
	out := []dir{{"tmp", "/tmp"}, {"state", StateDirectory(m.p.Name)}}
	seen := map[string]bool{"/tmp": true, StateDirectory(m.p.Name): true}
	for i, w := range m.p.Sandbox.Writable {
		// One mount per path: a pod with two at the same path is invalid.
		if !contains(w, m.p.Cwd) && !seen[w] {
			seen[w] = true
			out = append(out, dir{"writable-" + strconv.Itoa(i), w})
		}
	}
	return out
}

// literal keeps s as it is through Kubernetes' $(VAR) expansion of
// command, args and env values: every "$" doubled ("$$" is read back as
// one "$", whatever follows it).
func literal(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// ceilSeconds is d in whole seconds, rounded up, at least 1: the
// kubelet's probes count in seconds.
func ceilSeconds(d time.Duration) int32 {
	return int32(max(1, (d+time.Second-1)/time.Second))
}
