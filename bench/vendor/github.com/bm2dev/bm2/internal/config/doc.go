// Package config reads bm2 project files.
//
// A project file is a small TOML document, one per project, named after the
// project (/etc/bm2/api.toml holds project "api"). This package turns such a
// file into a validated [Project] with every default filled in, or into an
// error that names the file, the line and the key at fault:
//
//	/etc/bm2/api.toml:7: instances: must be at least 1 or "max", got 0
//
// Decoding is strict: unknown keys, wrong types and impossible values are all
// errors, and all problems of one file are reported together. Nothing here
// touches systemd; the package is shared by the generator (which runs at boot,
// before /var may be mounted), the bm2 command and the tests.
//
// restart_schedule, a systemd calendar expression, is checked against a
// subset of systemd.time(7)'s grammar that this package knows exactly
// ([CheckCalendar]): an expression systemd would refuse in the timer's
// OnCalendar= is refused here, with the file, the line and the key.
//
// The health_* keys ([Health], health.go) are checked together once every
// key is read: health_port, required in cluster mode, gives each instance
// a port of its own for the check, a range held like the port range
// ([Project.Occupied]) and allowed by the port fence
// ([Project.AllowedPorts]).
//
// Project files are found along a search path ([DefaultSearchPath], replaced
// by $BM2_CONFIG_PATH). The first file of a given name wins, as with systemd's
// own unit directories, and an empty file or a symlink to /dev/null masks a
// project of that name further down the path.
//
// Every project occupies a port range (cluster: port~port, fork:
// port~port+instances-1). [ResolveConflicts] decides deterministically which
// of several overlapping projects keeps its range: the one whose name sorts
// first. The others are refused with the exact message users know:
//
//	port conflict: web port range 3000~3000 overlaps api 3000~3003
package config
