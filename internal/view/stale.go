package view

import (
	"path/filepath"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/preload"
	"github.com/bm2dev/bm2/units"
)

// Stale is which running instances run with settings older than their
// unit.
type Stale struct {
	// Reload: systemd has a newer unit file than it read (daemon-reload
	// pending).
	Reload []string
	// Restart: one of the files an instance's settings are made of
	// changed after its process started (a restart applies them); File is
	// the last one found so, changed At.
	Restart []string
	File    string
	At      time.Time
}

// StaleOf finds p's stale instances among statuses (instance i's at i).
// The files are root's: the project file and its private part, the unit
// template, the generator and the helper; their change times (ctime,
// which no one can set) are compared with the main process's start.
func StaleOf(p *config.Project, statuses []UnitStatus) Stale {
	var s Stale
	for i, u := range statuses {
		id := units.InstanceID(p.Name, i)
		if u.MainPID == 0 || u.ExecMainStart.IsZero() {
			continue
		}
		if u.NeedDaemonReload {
			s.Reload = append(s.Reload, id)
			continue
		}
		if file, at := newestInput(p, u); at.After(u.ExecMainStart) {
			s.Restart = append(s.Restart, id)
			s.File, s.At = file, at
		}
	}
	return s
}

// newestInput is the most recently changed of the files an instance's
// settings come from.
func newestInput(p *config.Project, u UnitStatus) (string, time.Time) {
	files := []string{p.File, config.PrivatePath(p.File), u.FragmentPath}
	if len(u.ExecStart) > 0 && filepath.IsAbs(u.ExecStart[0]) {
		helper := u.ExecStart[0]
		files = append(files, helper, filepath.Join(filepath.Dir(helper), "..", "systemd", "system-generators", "bm2-generator"))
		if p.Preload() {
			files = append(files, preload.Path(helper))
		}
	}
	var newest time.Time
	which := ""
	for _, f := range files {
		if f == "" {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(f, &st) != nil {
			continue
		}
		if t := time.Unix(st.Ctim.Sec, st.Ctim.Nsec); t.After(newest) {
			newest, which = t, f
		}
	}
	return filepath.Clean(which), newest
}
