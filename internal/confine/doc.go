// Package confine runs a program once the way an instance of a project
// would run it, never in the caller's own context: as the instance's
// account, inside the instance's sandbox, in a transient systemd service
// (systemd-run --wait --pipe). Root's commands and hooks use it to ask a
// runtime that the app's user (or the app itself) could replace for its
// --version: run as root, or as the app's user outside the sandbox, such
// a binary would be code of the app's choosing on the host.
//
// The account and sandbox come from unit files: the settings that make
// them (User=, DynamicUser=, Group=, ProtectSystem=, SystemCallFilter=,
// ...; see Keys) are read from the instance's template and drop-ins, in
// systemd's order, and passed on as they are, with NoNewPrivileges=yes
// and PrivateNetwork=yes on top (a version needs neither).
package confine
