// Package convert turns PM2 apps into bm2 projects: the apps of an
// ecosystem file (as plain data, already evaluated) or of a dump.pm2
// written by `pm2 save`, in, and for each app a bm2.toml and the notes
// that say what means something different under bm2, out. It is pure: it
// reads no file and runs nothing; what it needs to know about the host
// (who owns a directory, whether a runtime is usable) comes in through
// Options.
//
// Every key PM2 documents is in one table (rules, in keys.go): each is
// either mapped onto a bm2.toml key or answered with a one-line note that
// says what to do instead; an unknown key gets a note too. bm2-import(1)
// prints the same table, and a test keeps the two in step.
//
// The questions an import must answer for every app:
//
//   - The port. bm2 needs one in the file; PM2 apps carry it in env.PORT
//     or env.NODE_PORT (or PM2's port key). It is taken from there when
//     they agree, from Options.Port (--port) otherwise, or, when only the
//     app's args give it (--port 8080, -p 8080: PortInArgs), from there;
//     an app with none is refused with the exact line to add. The variables that carried it go
//     into port_env, so the app keeps reading them (with port+i in fork
//     mode).
//   - reusePort. A PM2 cluster app relies on node:cluster, whose master
//     shares one socket; under bm2 every instance listens itself, with
//     reusePort: true. The app never passed it, so a cluster app is
//     imported with reuseport = "preload": bm2 supplies it (package
//     preload) and the app runs unchanged. Its note says so, what Bun
//     cannot do (its node:http ignores reusePort), and that Options.Fork
//     (--mode fork) gives each instance a port of its own instead.
//   - Privileged ports, which bm2 serves with CAP_NET_BIND_SERVICE alone.
//   - cron_restart, a cron expression, becomes restart_schedule, a
//     systemd calendar expression (cron.go): a timer then runs `bm2
//     reload`. Cron's "day of the month or weekday" has no calendar
//     form; such a schedule is left out with a note, and the app is
//     imported without it.
//   - The environment of a dump, which holds the PM2 daemon's whole
//     environment: only the app's own variables are kept (OwnEnv), and the
//     names of the others are listed; PORT and NODE_PORT are kept for the
//     port wherever they came from (`PORT=8005 pm2 start app.js`).
//
// An app without a name is named as PM2 names it (PM2Name): after its
// script. An app that cannot be imported (a script that is not
// JavaScript, an interpreter other than node or bun, a runtime below its
// floor, no port) is refused on its own; the others are still imported.
package convert
