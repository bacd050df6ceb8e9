package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MemoryRestart is the graceful memory restart of a project's instances,
// the memory_restart keys (bm2.toml(5), MEMORY RESTARTS): an instance
// whose memory stays above Limit is reloaded, as `bm2 reload
// <name>-<i>` does, before the kernel's memory_max would kill it. The
// zero value, Limit 0, is none: then every field is zero.
type MemoryRestart struct {
	// Limit is memory_restart in bytes.
	Limit uint64
	// Size is memory_restart as written, "300M".
	Size string
	// Interval is memory_check_interval_ms: the time between two checks.
	Interval time.Duration
}

// Defaults and limits of the memory restart, documented in bm2.toml(5).
const (
	DefaultMemoryCheckInterval = 5 * time.Second
	minMemoryCheckInterval     = time.Second
	maxMemoryCheckInterval     = time.Hour
	// MinMemoryRestart is the smallest memory_restart: Node.js and Bun
	// use some 40 MiB doing nothing, and a limit below what the app
	// needs to start would reload it forever.
	MinMemoryRestart = 32 << 20
	// MemoryConfirm is how long after a first reading above the limit the
	// check reads again: the instance is reloaded only when both are
	// above (its memory "stays" above), not for a peak its garbage
	// collector is about to give back.
	MemoryConfirm = time.Second
	// MemoryGrace is how long a run is left alone after it started: a
	// start may peak (the bundle loaded, the JIT warming up), and a limit
	// below what the app needs to run reloads it at most once a grace.
	MemoryGrace = 10 * time.Second
)

// MemoryWatched tells whether the project has memory_restart.
func (p *Project) MemoryWatched() bool { return p.MemoryRestart.Limit > 0 }

// ParseBytes reads a size in bm2's form (as memory_restart takes it):
// digits with an optional base-1024 suffix K, M, G or T. ok is false for
// anything else, or past 64 bits.
func ParseBytes(s string) (n uint64, ok bool) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil || strings.ContainsAny(m[2], "PE") {
		return 0, false
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return 0, false
	}
	shift := uint(0)
	if m[2] != "" {
		shift = 10 * uint(strings.Index("KMGT", m[2])+1)
	}
	if n > math.MaxUint64>>shift {
		return 0, false
	}
	return n << shift, true
}

// FormatBytes is n in a person's units: "312.4 MiB".
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	f, suffix := float64(n), ""
	for _, s := range []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"} {
		f /= unit
		suffix = s
		if f < unit {
			break
		}
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + suffix
}

func setMemoryRestart(v *validator, p *Project, k string, val any) {
	s := val.(string)
	n, ok := ParseBytes(s)
	if !ok {
		v.add(k, ErrValue, "must be a size like \"300M\" or \"1G\" (digits and one of the suffixes K M G T, base 1024), got %q", s)
		return
	}
	if n < MinMemoryRestart {
		v.add(k, ErrValue, "must be at least 32M, got %q: a Node.js or Bun app uses some 40 MiB doing nothing, and a lower limit would reload it forever", s)
		return
	}
	p.MemoryRestart.Limit, p.MemoryRestart.Size = n, s
}

// memoryRestart checks memory_restart with memory_check_interval_ms and
// [resources] memory_max once every key is read; without memory_restart
// it leaves no trace of them in the project.
func (v *validator) memoryRestart(p *Project) {
	_, set := v.where["memory_restart"]
	if !set || !p.MemoryWatched() {
		if _, ok := v.where["memory_check_interval_ms"]; ok && !set {
			v.add("memory_check_interval_ms", ErrValue, "needs memory_restart: the memory check is on only when memory_restart says the limit, like memory_restart = \"300M\"")
		}
		p.MemoryRestart = MemoryRestart{}
		return
	}
	m := &p.MemoryRestart
	if m.Interval == 0 {
		m.Interval = DefaultMemoryCheckInterval
	}
	max := p.Resources.MemoryMax
	if n, ok := ParseBytes(max); ok && m.Limit >= n {
		v.add("memory_restart", ErrValue, "must be below [resources] memory_max (%s), got %q: the kernel kills an instance at memory_max, and memory_restart is the point at which bm2 reloads it gracefully, before that",
			max, m.Size)
	} else if n, ok := ParseBytes(p.Resources.MemoryHigh); ok && m.Limit >= n {
		v.add("memory_restart", ErrValue, "must be below [resources] memory_high (%s), got %q: the kernel throttles an instance at memory_high and would keep it from ever reaching memory_restart",
			p.Resources.MemoryHigh, m.Size)
	}
}

// MemorySummary is the memory restart in a person's words, for bm2
// check; "" for none: "an instance above 300M (checked every 5s, and
// again 1s later) is reloaded alone".
func (p *Project) MemorySummary() string {
	if !p.MemoryWatched() {
		return ""
	}
	return fmt.Sprintf("an instance whose memory is above %s (checked every %s, and again %s later; not in its first %s) is reloaded alone, as `bm2 reload %s-<i>` does",
		p.MemoryRestart.Size, p.MemoryRestart.Interval, MemoryConfirm, MemoryGrace, p.Name)
}
