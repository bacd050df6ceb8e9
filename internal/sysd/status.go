package sysd

import (
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Unknown marks a counter systemd does not know (it reports 2^64-1).
const Unknown = math.MaxUint64

// NoID is what systemd reports as UID or GID of a unit that is not running.
const NoID = math.MaxUint32

// Status is what bm2 reads about one unit. The service part is filled in
// for .service units only, the socket and timer parts for loaded .socket
// and .timer units.
type Status struct {
	Name             string
	LoadState        string // loaded, not-found, masked, ...
	ActiveState      string // active, activating, deactivating, inactive, failed, reloading
	SubState         string // running, start, auto-restart, dead, failed, ...
	NeedDaemonReload bool   // a unit file or its source changed since systemd read it
	JobPending       bool   // a job for the unit is queued or running
	JobID            uint32 // that job's id; 0 when none

	ActiveEnter          time.Time     // when the unit last became active; zero if never
	ActiveEnterMonotonic time.Duration // the same on CLOCK_MONOTONIC
	InactiveEnter        time.Time     // when the unit last became inactive (or failed); zero if never
	StateChangeMonotonic time.Duration // when its state (ActiveState or SubState) last changed, CLOCK_MONOTONIC; 0 if never
	InvocationID         string        // changes with every start of the unit (hex); "" if never started
	FragmentPath         string        // the unit file systemd loaded
	DropInPaths          []string      // its drop-ins
	Wants                []string      // units it wants (targets: their instances)
	UnitFileState        string        // enabled, enabled-runtime, static, disabled, generated, ... ("" when it has no file)

	// Service properties.
	Result           string    // success, exit-code, signal, core-dump, timeout, start-limit-hit, ...
	MainPID          uint32    // 0 when none
	NRestarts        uint32    // automatic restarts since the unit was last started by hand
	ExecMainCode     int32     // how the last main process ended: CLD_EXITED (1), CLD_KILLED (2), CLD_DUMPED (3)
	ExecMainStatus   int32     // its exit status, or the signal number that ended it
	ExecMainStart    time.Time // when the current (or last) main process started
	ExecMainPID      uint32    // the current (or last) main process, kept after it exited; 0 if none
	ControlGroup     string    // e.g. /bm2.slice/bm2-api.slice/bm2@api-0.service; "" when it has none
	MemoryCurrent    uint64    // bytes; Unknown when not accounted or not running
	CPUUsageNSec     uint64    // cumulative CPU time; Unknown when not accounted
	TasksCurrent     uint64    // processes and threads in its control group; Unknown when not accounted or not running
	UID, GID         uint32    // the identity the running unit has (DynamicUser= included); NoID when not running
	User, Group      string    // User= and Group= as configured
	WorkingDirectory string    // WorkingDirectory=
	Environment      []string  // Environment= as configured (not EnvironmentFile= contents)
	ExecStart        []string  // argv of the first ExecStart= command
	TimeoutStop      time.Duration

	// Socket properties (.socket units): Listen= as systemd has it,
	// "TYPE ADDRESS" each ("Stream 127.0.0.1:9615").
	Listen []string

	// Timer properties (.timer units): when it next triggers its unit
	// (NextElapseUSecRealtime; zero when it will not: inactive, or a
	// calendar that never comes again) and when it last did
	// (LastTriggerUSec; zero if never).
	NextElapse  time.Time
	LastTrigger time.Time
}

// Running reports whether the unit is active with its main process up.
func (s Status) Running() bool { return s.ActiveState == "active" && s.SubState == "running" }

// Gone reports whether the unit is inactive or failed with no job pending:
// it will not come back by itself.
func (s Status) Gone() bool {
	return (s.ActiveState == "inactive" || s.ActiveState == "failed") && !s.JobPending
}

// Down reports whether the unit is inactive or failed, a job pending or
// not: there is nothing of it to stop.
func (s Status) Down() bool { return s.ActiveState == "inactive" || s.ActiveState == "failed" }

// Env returns the value of one Environment= variable, or "".
func (s Status) Env(name string) string {
	for _, kv := range s.Environment {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// NotFound returns the status systemd gives a unit it has no file for.
func NotFound(name string) Status {
	return Status{Name: name, LoadState: "not-found", ActiveState: "inactive", SubState: "dead",
		MemoryCurrent: Unknown, CPUUsageNSec: Unknown, TasksCurrent: Unknown, UID: NoID, GID: NoID}
}

// IsService tells a .service unit by its name.
func IsService(name string) bool {
	return len(name) > len(".service") && strings.HasSuffix(name, ".service")
}

// fill reads the Unit interface's properties.
func (s *Status) fill(props map[string]any) {
	s.LoadState = str(props["LoadState"])
	s.ActiveState = str(props["ActiveState"])
	s.SubState = str(props["SubState"])
	s.NeedDaemonReload = boolean(props["NeedDaemonReload"])
	s.JobID = jobID(props["Job"])
	s.JobPending = s.JobID != 0
	s.ActiveEnter = usec(props["ActiveEnterTimestamp"])
	s.ActiveEnterMonotonic = time.Duration(u64(props["ActiveEnterTimestampMonotonic"])) * time.Microsecond
	s.InactiveEnter = usec(props["InactiveEnterTimestamp"])
	s.StateChangeMonotonic = time.Duration(u64(props["StateChangeTimestampMonotonic"])) * time.Microsecond
	s.InvocationID = invocation(props["InvocationID"])
	s.FragmentPath = str(props["FragmentPath"])
	s.DropInPaths = strv(props["DropInPaths"])
	s.Wants = strv(props["Wants"])
	s.UnitFileState = str(props["UnitFileState"])
}

// fillService reads the Service interface's properties.
func (s *Status) fillService(sp map[string]any) {
	s.Result = str(sp["Result"])
	s.MainPID = u32(sp["MainPID"])
	s.NRestarts = u32(sp["NRestarts"])
	s.ExecMainCode = i32(sp["ExecMainCode"])
	s.ExecMainStatus = i32(sp["ExecMainStatus"])
	s.ExecMainStart = usec(sp["ExecMainStartTimestamp"])
	s.ExecMainPID = u32(sp["ExecMainPID"])
	s.ControlGroup = str(sp["ControlGroup"])
	if v, ok := sp["MemoryCurrent"].(uint64); ok {
		s.MemoryCurrent = v
	}
	if v, ok := sp["CPUUsageNSec"].(uint64); ok {
		s.CPUUsageNSec = v
	}
	if v, ok := sp["TasksCurrent"].(uint64); ok {
		s.TasksCurrent = v
	}
	if v, ok := sp["UID"].(uint32); ok {
		s.UID = v
	}
	if v, ok := sp["GID"].(uint32); ok {
		s.GID = v
	}
	s.User = str(sp["User"])
	s.Group = str(sp["Group"])
	s.WorkingDirectory = str(sp["WorkingDirectory"])
	s.Environment = strv(sp["Environment"])
	s.ExecStart = execArgv(sp["ExecStart"])
	if us := u64(sp["TimeoutStopUSec"]); us < uint64(time.Hour/time.Microsecond)*24*365 {
		s.TimeoutStop = time.Duration(us) * time.Microsecond
	}
}

// IsSocket tells a .socket unit by its name.
func IsSocket(name string) bool {
	return len(name) > len(".socket") && strings.HasSuffix(name, ".socket")
}

// fillSocket reads the Socket interface's properties.
func (s *Status) fillSocket(sp map[string]any) {
	s.Listen = listen(sp["Listen"])
}

// IsTimer tells a .timer unit by its name.
func IsTimer(name string) bool {
	return len(name) > len(".timer") && strings.HasSuffix(name, ".timer")
}

// fillTimer reads the Timer interface's properties.
func (s *Status) fillTimer(tp map[string]any) {
	s.NextElapse = usec(tp["NextElapseUSecRealtime"])
	s.LastTrigger = usec(tp["LastTriggerUSec"])
}

// listen reads Listen, an array of (type, address) structs.
func listen(v any) []string {
	var out []string
	add := func(f []any) {
		if len(f) == 2 {
			t, _ := f[0].(string)
			a, _ := f[1].(string)
			out = append(out, t+" "+a)
		}
	}
	switch l := v.(type) {
	case [][]any:
		for _, f := range l {
			add(f)
		}
	case []any:
		for _, f := range l {
			if ff, ok := f.([]any); ok {
				add(ff)
			}
		}
	}
	return out
}

// jobID reads the id of the (id, path) struct of the Job property.
func jobID(v any) uint32 {
	if s, ok := v.([]any); ok && len(s) == 2 {
		if id, ok := s[0].(uint32); ok {
			return id
		}
	}
	return 0
}

// execArgv reads the argv of the first command of an Exec*= property,
// a(sasbttttuii).
func execArgv(v any) []string {
	cmds, ok := v.([][]any)
	if !ok || len(cmds) == 0 || len(cmds[0]) < 2 {
		return nil
	}
	argv, _ := cmds[0][1].([]string)
	return argv
}

// invocation renders an InvocationID property (16 bytes) as hex, the way
// systemctl and the journal's _SYSTEMD_INVOCATION_ID show it.
func invocation(v any) string {
	b, _ := v.([]byte)
	for _, c := range b {
		if c != 0 {
			return hex.EncodeToString(b)
		}
	}
	return "" // never started
}

func str(v any) string    { s, _ := v.(string); return s }
func strv(v any) []string { s, _ := v.([]string); return s }
func boolean(v any) bool  { b, _ := v.(bool); return b }
func u32(v any) uint32    { n, _ := v.(uint32); return n }
func i32(v any) int32     { n, _ := v.(int32); return n }
func u64(v any) uint64    { n, _ := v.(uint64); return n }

// usec converts a systemd timestamp (microseconds since the epoch, 0 for
// never) to a time.
func usec(v any) time.Time {
	n, _ := v.(uint64)
	if n == 0 || n == Unknown {
		return time.Time{}
	}
	return time.UnixMicro(int64(n))
}

// cgroupRoots are where a unit's ControlGroup is found: the unified
// hierarchy on a hybrid host, a unified host, systemd's legacy hierarchy.
var cgroupRoots = []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/systemd"}

// PIDs returns the processes in the unit's control group, or its main
// process when the group cannot be read.
func (s Status) PIDs() []uint32 {
	if s.ControlGroup != "" {
		for _, root := range cgroupRoots {
			data, err := os.ReadFile(filepath.Join(root, s.ControlGroup, "cgroup.procs"))
			if err != nil {
				continue
			}
			var pids []uint32
			for _, f := range strings.Fields(string(data)) {
				if n, err := strconv.ParseUint(f, 10, 32); err == nil {
					pids = append(pids, uint32(n))
				}
			}
			if len(pids) > 0 {
				return pids
			}
		}
	}
	if s.MainPID != 0 {
		return []uint32{s.MainPID}
	}
	return nil
}
