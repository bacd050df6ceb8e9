// Package portfence keeps an instance to its own ports: a cgroup BPF
// program on the instance's cgroup (BPF_CGROUP_INET4_BIND and
// BPF_CGROUP_INET6_BIND) lets bind() through only for the ports the
// project file gives the instance (its port, [sandbox] extra_ports) and for
// port 0 (an ephemeral port), and makes every other bind fail with EPERM.
//
// systemd's own SocketBindAllow= would do the same, but the systemd 252 of
// Debian 12 is built without BPF_FRAMEWORK, where it parses and does
// nothing. So bm2-probe fence, a root ExecStartPre=+ of every system-scope
// instance, attaches this program itself, before the app runs, to the
// cgroup v2 directory systemd made for the unit (at /sys/fs/cgroup on a
// unified host, /sys/fs/cgroup/unified on a hybrid one). It is attached
// with BPF_PROG_ATTACH and BPF_F_ALLOW_MULTI: it stays after the helper
// exits and goes away with the cgroup.
//
// Where it cannot be applied (a user manager, which has no CAP_BPF; a host
// whose systemd keeps no cgroup v2 directory per unit; a kernel without
// cgroup BPF) the instance still starts, the step logs why, and Check says
// so for `bm2 check` and `bm2 status`.
package portfence
