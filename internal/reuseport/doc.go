// Package reuseport asks the kernel whether a TCP port can be shared with
// SO_REUSEPORT, the question behind bm2's cluster mode.
//
// [CheckPort] binds 0.0.0.0:<port> and [::]:<port> (IPv6 only) twice each
// without ever listening: first with only SO_REUSEADDR (success: nobody
// listens on the port), then with SO_REUSEADDR and SO_REUSEPORT (success:
// the listener lets others join; EADDRINUSE: it holds the port
// exclusively). SO_REUSEADDR on both makes only listeners count, not the
// TIME_WAIT sockets a stopped server leaves on the port, which lack
// SO_REUSEPORT when it did. The kernel lets a socket join a port group only
// when both belong to the same user, so the answer depends on who asks:
// [CheckPortAs] asks as the app's user by switching the filesystem UID of
// one locked thread. It is used by the reusePort probe (as root, with the
// UID and GID systemd reports for the instance) and by `bm2 check` (as
// root, with the project's user). Whoever cannot take the app's identity
// gets identity.ErrNotPermitted, never an answer for somebody else.
//
// [ListenControl] is the other side: a net.ListenConfig Control function
// that sets SO_REUSEADDR and SO_REUSEPORT the way a reusePort app's
// listener does, for tests and tools.
package reuseport
