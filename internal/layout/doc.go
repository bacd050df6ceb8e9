// Package layout says where bm2 lives: in system scope (root, the system
// manager, /etc/bm2, /var/lib/bm2, /var/log/bm2) or in user scope (a normal
// user, their own systemd --user, every path under ~/.bm2).
//
// A [Layout] is the whole answer for one scope: where project files are
// found and registered, where state, crash logs and locks live, which
// manager and which socket to talk to, which target enables a project.
// Every other package takes its paths from a Layout instead of knowing
// them, so the system and the user shapes cannot drift apart: what
// differs between the scopes is data set by [System] and [User], not a
// branch in each caller.
//
// User scope, on disk:
//
//	~/.bm2/projects/<name>.toml            registered project files (bm2 serve)
//	~/.bm2/projects/private/<name>.toml    their secrets ([env], webhook), 0600 in a 0700 dir
//	~/.bm2/state/errored/<name>            errored marks
//	~/.bm2/state/reload/<name>.lock        a reload under way
//	~/.bm2/state/registry.lock             serve/delete in progress
//	~/.bm2/state/notify/                   notifications waiting for delivery, 0700
//	~/.bm2/<name>/logs/<name>-<i>.crash.log  crash logs (the seed's path)
//
// Only the project's owner can write any of them; nothing lives outside the
// home directory but what systemd itself keeps in $XDG_RUNTIME_DIR.
package layout
