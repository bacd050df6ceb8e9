package units

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
)

// NameMax is the longest file name (and unit name) Linux and systemd
// allow: NAME_MAX, 255 bytes.
const NameMax = 255

// TempPrefix starts the temporary name a file has while it is written
// (safefs.TempPrefix): every unit file name plus it must fit NameMax.
const TempPrefix = ".#"

// Escape escapes s for use as one component of a unit name, as
// systemd-escape(1) does: "-" (hierarchy in slice names) and every byte
// outside [A-Za-z0-9:_.] become \xNN, "/" becomes "-".
func Escape(s string) string { return unit.UnitNameEscape(s) }

// Slice is the project's slice, a child of bm2.slice.
func Slice(project string) string { return "bm2-" + Escape(project) + ".slice" }

// Target is the project's target, which wants every instance.
func Target(project string) string { return "bm2-" + project + ".target" }

// RestartTimer is the timer of a project's restart_schedule: it starts
// RestartService at the times the schedule names, while the project's
// target is active.
func RestartTimer(project string) string { return "bm2-" + project + "-restart.timer" }

// RestartService is the oneshot a project's RestartTimer starts: `bm2
// reload <project>`, the rolling reload.
func RestartService(project string) string { return "bm2-" + project + "-restart.service" }

// MemoryTimer is the timer of a project's memory restart
// (memory_restart): it starts MemoryService every
// memory_check_interval_ms while the project's target is active.
func MemoryTimer(project string) string { return "bm2-" + project + "-memory.timer" }

// MemoryService is the oneshot a project's MemoryTimer starts: `bm2-probe
// memory <project>`, one check of every running instance's memory.
func MemoryService(project string) string { return "bm2-" + project + "-memory.service" }

// ReloadTemplate is the template of ReloadInstance, written for a
// project with memory_restart.
func ReloadTemplate(project string) string { return "bm2-" + project + "-reload@.service" }

// ReloadPattern matches every ReloadInstance of a project, for
// ListUnitsByPatterns.
func ReloadPattern(project string) string { return "bm2-" + project + "-reload@*.service" }

// ReloadInstance is the oneshot that reloads instance i of a project
// alone, `bm2 reload <project>-<i>`: what MemoryService starts for an
// instance above memory_restart.
func ReloadInstance(project string, i int) string {
	return "bm2-" + project + "-reload@" + strconv.Itoa(i) + ".service"
}

// HealthTimer is the timer of a project's HTTP health check
// (health_path): it starts HealthService every health_interval_ms while
// the project's target is active.
func HealthTimer(project string) string { return "bm2-" + project + "-health.timer" }

// HealthService is the oneshot a project's HealthTimer starts: `bm2-probe
// health <project>`, one check of every running instance.
func HealthService(project string) string { return "bm2-" + project + "-health.service" }

// Surge is the index of a cluster-mode project's surge instance,
// "<project>-surge": a generated unit that no target wants, which `bm2
// reload` starts beside the others so that the port keeps as many
// listeners as the project has instances while each one restarts.
const Surge = -2

// SurgeName is the surge's instance suffix.
const SurgeName = "surge"

// InstanceID is the template instance string, "<project>-<i>", or
// "<project>-surge" for Surge.
func InstanceID(project string, i int) string {
	if i == Surge {
		return project + "-" + SurgeName
	}
	return project + "-" + strconv.Itoa(i)
}

// Instance is the full unit name of instance i, "bm2@<project>-<i>.service".
func Instance(project string, i int) string {
	return "bm2@" + InstanceID(project, i) + ".service"
}

// InstancePattern matches every instance unit of a project.
func InstancePattern(project string) string { return "bm2@" + project + "-*.service" }

// Probe is the reusePort probe of instance i, "bm2-probe@<project>-<i>.service".
func Probe(project string, i int) string {
	return "bm2-probe@" + InstanceID(project, i) + ".service"
}

// ProbePattern matches every probe unit of a project.
func ProbePattern(project string) string { return "bm2-probe@" + project + "-*.service" }

// Steer is the steering step of instance i, "bm2-steer@<project>-<i>.service"
// (system scope): the probe starts it once the instance shares its port,
// and it adds the instance's listener to the port's kernel-steered turn.
func Steer(project string, i int) string {
	return "bm2-steer@" + InstanceID(project, i) + ".service"
}

// SteerPattern matches every steering step of a project.
func SteerPattern(project string) string { return "bm2-steer@" + project + "-*.service" }

// DropInDir is the drop-in directory of instance i.
func DropInDir(project string, i int) string { return Instance(project, i) + ".d" }

// Account is the user a project's instances run as when its file names
// none: "bm2-<project>", systemd's DynamicUser= unless an account of that
// name exists (then that one, so files can be given to it). User names
// have at most 31 characters; a longer one keeps 18 characters of the
// project name and adds 8 hex digits of its SHA-256, so that two long
// names never share an account.
func Account(project string) string {
	name := "bm2-" + project
	if len(name) <= 31 {
		return name
	}
	sum := sha256.Sum256([]byte(project))
	return "bm2-" + project[:18] + "-" + hex.EncodeToString(sum[:4])
}

// LongestName is the longest file name the generator writes for a project
// with the given number of instances, including the temporary prefix: it
// must not exceed NameMax. The restart schedule's and the health check's
// units count whether the project has them or not (they are never the
// longest: the surge's drop-in directory is as long as RestartService,
// the health check's are shorter, and the slice, where every "-" takes
// four bytes, is longer than all of them).
func LongestName(project string, instances int) int {
	n := max(len(Slice(project)), len(Target(project)), len(DropInDir(project, max(instances-1, 0))), len(DropInDir(project, Surge)),
		len(RestartTimer(project)), len(RestartService(project)), len(HealthTimer(project)), len(HealthService(project)),
		len(MemoryTimer(project)), len(MemoryService(project)), len(ReloadTemplate(project)),
		len(Target(project)+".wants"))
	return len(TempPrefix) + n
}

// ParseInstance splits "api-0", "bm2@api-0" or "bm2@api-0.service" into the
// project name and the index; "api-surge" is Surge.
func ParseInstance(s string) (project string, index int, ok bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "bm2@"), ".service")
	dash := strings.LastIndexByte(s, '-')
	if dash <= 0 || dash == len(s)-1 {
		return "", 0, false
	}
	digits := s[dash+1:]
	if digits == SurgeName {
		return s[:dash], Surge, true
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", 0, false
		}
	}
	if len(digits) > 1 && digits[0] == '0' {
		return "", 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return "", 0, false
	}
	return s[:dash], n, true
}

// ParseSteer is ParseInstance for a steering step's name.
func ParseSteer(s string) (project string, index int, ok bool) {
	rest, found := strings.CutPrefix(s, "bm2-steer@")
	if !found {
		return "", 0, false
	}
	return ParseInstance(rest)
}

// ParseProbe is ParseInstance for a probe unit's name.
func ParseProbe(s string) (project string, index int, ok bool) {
	rest, found := strings.CutPrefix(s, "bm2-probe@")
	if !found {
		return "", 0, false
	}
	return ParseInstance(rest)
}
