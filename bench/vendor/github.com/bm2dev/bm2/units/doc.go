// Package units knows bm2's systemd units: the static files shipped as they
// are (bm2.slice, the bm2@.service template), the names of the units the
// generator derives from a project, and a small ordered model of a unit file
// that renders byte-for-byte the same every time.
//
// Naming, for a project "my-api" with two instances:
//
//	bm2.slice                    shipped; parent of every project slice
//	bm2-my\x2dapi.slice          the project's slice ("-" is hierarchy in slice names, so it is escaped)
//	bm2-my-api.target            wants every instance; enabled from multi-user.target
//	bm2@my-api-0.service         instance 0 of the shipped template
//	bm2@my-api-1.service         instance 1
//	bm2-steer@my-api-1.service   shipped template: puts instance 1's listener in the port's steered turn (system scope)
//	bm2-my-api-restart.timer     restart_schedule: starts the next one at the times it names
//	bm2-my-api-restart.service   `bm2 reload my-api`, run by that timer
//	bm2-my-api-health.timer      health_path: starts the next one every health_interval_ms
//	bm2-my-api-health.service    `bm2-probe health my-api`, one check of every instance
//
// Instance names split at their last "-": the index is always the digits
// after it, so project names may themselves contain "-" and digits.
package units
