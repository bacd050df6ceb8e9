// Package identity is the app's user as bm2's root processes see it: a
// user id and group id, how to resolve a user name to them through the
// system's user database, and how to act as that user for one operation
// without the process ever giving up root.
//
// [Do] runs a function on one locked OS thread whose filesystem UID and
// GID are the app's. Files it opens and sockets it creates belong to the
// app's user, and permission checks are the app's; every other thread of
// the process keeps root. The reusePort probe binds the app's port this
// way, and the exit hook opens the app's env_file this way.
package identity
