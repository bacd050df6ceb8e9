// Package kube takes bm2 projects past one machine, to Kubernetes: the
// manifests of `bm2 export kube` ([Export]) and the HTTPRoute of `bm2
// gateway httproute` ([Routes]).
//
// On a host, bm2 turns a project file into systemd units: N instances of
// the runtime, in cwd, with bm2's variables, a sandbox, a restart budget
// and a probe. Most of that has a Kubernetes equivalent, and this package
// writes it with the upstream API types (k8s.io/api, the Gateway API's
// apis/v1), serialized by sigs.k8s.io/yaml: a project becomes
//
//   - a Service (ClusterIP) on the project's port, in front of
//   - a Deployment of `instances` replicas, whose container runs what
//     ExecStart= runs (the runtime, runtime_args, the script, args, in
//     cwd) from the image the user names, with BM2_APP_NAME,
//     BM2_APP_PORT, BM2_EXEC_MODE, port_env and STATE_DIRECTORY as on a
//     host; or, with Options.Ordinal, a StatefulSet and the headless
//     Service it needs, whose pods get BM2_APP_INSTANCE from their
//     ordinal (the label apps.kubernetes.io/pod-index);
//   - with Options.Gateway, an HTTPRoute to the Service, its hostnames
//     and path prefix as `bm2 gateway --server-name --path-prefix` have
//     them (package gateway's checks and paths);
//   - with Options.Secrets, a Secret of [env] in a file of its own.
//
// # What maps to what
//
// Cluster mode and fork mode both become replicas behind one Service:
// in a pod the app has a network namespace and the whole port to itself,
// so reusePort (cluster) and port+i (fork) are host matters, every pod
// listens on the project's port, and the Service balances. A Deployment's
// replicas are identical, so it sets no BM2_APP_INSTANCE: instance "0"'s
// migrations and cron would run in every pod, and the manifests point to
// a Job for one-off work, or to --ordinal. The rolling update is bm2
// reload's: one pod more before one less (maxSurge 1, maxUnavailable 0).
//
// A worker (a project without port: a queue consumer, a cron job, a
// bot) is its workload alone, as on a host it is instances with no port:
// no Service, no containerPort, no BM2_APP_PORT, and no probe unless it
// has a health check, whose GET on health_port the probes are. A rollout
// stops a pod before it starts the next (maxSurge 0, maxUnavailable 1),
// as bm2 reload restarts a worker's instances without a surge. With
// Options.Ordinal its StatefulSet's serviceName still names the headless
// Service, which is not written: Kubernetes does not require it to exist
// (the pods only have no DNS records), and serviceName cannot change
// when the project gets a port. With Options.Gateway it gets no
// HTTPRoute, and its manifests say why; Routes refuses it, since a route
// is all it would write.
//
// The probe and the restart budget become probes and restartPolicy
// Always: a startup probe gives the app 60 s to listen, as bm2's probe
// does; readiness takes a pod that does not answer out of the Service;
// liveness restarts one that stopped answering; min_uptime_ms is
// minReadySeconds; stop_timeout_ms, rounded up, is
// terminationGracePeriodSeconds. The probes connect to the port (TCP),
// or, where the project has an HTTP health check (health_path), GET its
// path on the port instance 0 answers it on ([probeHandler]), liveness
// with the check's interval, timeout and failures. The kubelet backs off (10 s doubling to
// 5 min) and never gives up, so restart_delay_ms, restart_delay_max_ms
// and max_restarts have no equivalent.
//
// memory_max and cpu_quota are the limits; the requests are the limits
// too (Kubernetes would default a missing request to the limit anyway),
// except memory_high, which is the memory request when set.
//
// The sandbox becomes what a pod has of it: runAsNonRoot,
// allowPrivilegeEscalation false, every capability dropped (but
// NET_BIND_SERVICE for a port below 1024), seccomp RuntimeDefault, a
// read-only root file system with emptyDirs for /tmp, the state
// directory and [sandbox] writable paths, no service account token and
// no Service links. Sandbox mode "compat", or a writable path that holds
// the app, keeps the root file system writable.
//
// # Secrets
//
// No [env] value is ever in the manifests. Each key is a secretKeyRef to
// Secret <name>-env, which the user creates (the notes say how) or
// Options.Secrets writes into a File of its own, marked Secret: mode
// 0600, never printed. env_file is a required Secret, <name>-env-file,
// in envFrom; with one, [env] comes through envFrom too, before it, so
// that env_file overrides [env] as on a host, and BM2_* override both.
//
// # What does not map
//
// A project that cannot run in a pod as it says is refused, every
// problem a config.Error naming the file, the line and the key
// (ErrUnmappable): a cwd, runtime_path or script under /home, /root,
// /run, /tmp or /var/tmp (an image has no such trees: a user-scope
// project lives in its user's home, so it is refused until cwd names
// where the image holds the app), user root, a memory size that is a
// share of the host's memory, a private part the exporter cannot read (the
// [env] names would be missing), a name Kubernetes objects cannot take.
// A setting that means something on a bm2 host and nothing in a pod is
// left out with a warning (ErrDropped), in Result.Warnings and in the
// manifests' comments: an account or group name (only numbers cross the
// image boundary: runAsUser, runAsGroup), instances = "max", the restart
// budget's keys, restart_schedule, wants, requires and after,
// [notify], the journal's rate limits and level prefixes, cpu_weight,
// tasks_max, slice_tasks_max and limit_nofile, and [sandbox] writable
// (an emptyDir does not keep what is written in it). reuseport =
// "preload" is left out with a note: alone on its port, the app needs no
// reusePort.
//
// # Output
//
// Like package generator and package gateway, [Export] and [Routes] are
// pure: projects and options in, bytes out, no clock, no map order. Keys
// are sorted, there is no status and no null field, and the same input
// gives the same bytes. `bm2 export kube` (package cli) is the edge that
// reads the project files and prints or writes the files.
package kube
