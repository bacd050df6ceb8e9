package reason

// Reason is the machine-readable why of an event (its BM2_REASON), of a
// crash.log line and of an errored state.
type Reason string

// Every reason bm2 records.
const (
	// The reusePort probe.
	ReuseportMissing Reason = "reuseport_missing" // cluster mode, port bound exclusively: project stopped
	NoListener       Reason = "no_listener"       // nobody listened within the probe's window
	LoopbackOnly     Reason = "loopback_only"     // cluster mode, exclusive listener on 127.0.0.1 or ::1 only: project stopped
	PortInUse        Reason = "port_in_use"       // another user's process holds the port: that instance stays down

	// An instance that gave up.
	Budget Reason = "restart_budget_exhausted"

	// The HTTP health check: health_failures checks in a row failed, and
	// the instance was restarted.
	Unhealthy Reason = "unhealthy"
	// The memory restart: the instance's memory stayed above
	// memory_restart, and it was reloaded.
	MemoryRestart Reason = "memory_restart"

	// Connection steering (bm2-steer@<project>-<i>.service): why a
	// cluster-mode port keeps the kernel's hash instead of a round-robin
	// (a steering_unavailable event; the project runs on). The first
	// three are package steer's words (steer.Reason*).
	NoBPFFS              Reason = "no_bpffs"               // no bpf filesystem at /sys/fs/bpf
	NoPermission         Reason = "no_permission"          // the kernel refused a bpf() call or pidfd_getfd
	KernelTooOld         Reason = "kernel_too_old"         // before Linux 5.14
	ListenerNotSteerable Reason = "listener_not_steerable" // the app's listener is no plain TCP listener (MPTCP)

	// Refused before the app started (exit status 78).
	RuntimeMissing    Reason = "runtime_missing"
	RuntimeBelowFloor Reason = "runtime_below_floor"
	EnvFile           Reason = "env_file_refused"
	Rejected          Reason = "runtime_rejected"  // refused, cause not known to the root side
	ScriptMissing     Reason = "script_missing"    // the script is not there or not readable by the app's user
	FenceFailed       Reason = "port_fence_failed" // the port fence could not be attached: the app is not started unfenced

	// systemd could not start the process (exit status 200/CHDIR,
	// 217/USER): restarting cannot help.
	CwdMissing  Reason = "cwd_missing"
	UserMissing Reason = "user_missing"

	// Found by bm2 check and serve before anything starts; never recorded
	// in the journal.
	ConfigInvalid Reason = "config_invalid"
	PortConflict  Reason = "port_conflict"

	// How a run ended (systemd's Result, in bm2's words).
	Exited     Reason = "exited"
	Killed     Reason = "killed"
	CoreDumped Reason = "core_dumped"
	Timeout    Reason = "timeout"
	OOM        Reason = "oom_killed"
	Watchdog   Reason = "watchdog"
)

// All returns every reason bm2 records.
func All() []Reason {
	return []Reason{ReuseportMissing, NoListener, LoopbackOnly, PortInUse, Budget, Unhealthy, MemoryRestart,
		NoBPFFS, NoPermission, KernelTooOld, ListenerNotSteerable,
		RuntimeMissing, RuntimeBelowFloor, EnvFile, Rejected, ScriptMissing,
		FenceFailed, CwdMissing, UserMissing, ConfigInvalid, PortConflict,
		Exited, Killed, CoreDumped, Timeout, OOM, Watchdog}
}

// Refusal tells whether a reason means bm2 refused to start the app.
func (r Reason) Refusal() bool {
	switch r {
	case RuntimeMissing, RuntimeBelowFloor, EnvFile, Rejected, FenceFailed:
		return true
	}
	return false
}

// OfSpawn is the reason for an exit status systemd itself gives a process
// it could not start: 200 (CHDIR: WorkingDirectory= missing or not
// enterable) and 217 (USER: User= does not exist); "" for any other.
func OfSpawn(status int) Reason {
	switch status {
	case 200:
		return CwdMissing
	case 217:
		return UserMissing
	}
	return ""
}

// OfResult turns systemd's Result of a run into a reason.
func OfResult(result string) Reason {
	switch result {
	case "", "success":
		return ""
	case "exit-code":
		return Exited
	case "signal":
		return Killed
	case "core-dump":
		return CoreDumped
	case "timeout":
		return Timeout
	case "oom-kill":
		return OOM
	case "watchdog":
		return Watchdog
	case "start-limit-hit":
		return Budget
	}
	return Reason(result)
}
