// Package probehelper asks the kernel whether a cluster-mode app really
// shares its port.
//
// The question is answered with two bind(2) calls and never a listen(2)
// (see [CheckPort]): a free port binds with SO_REUSEADDR alone; a port held
// by a reusePort listener accepts a second bind with SO_REUSEPORT; a port
// held exclusively refuses both. SO_REUSEPORT only joins sockets of the same
// effective UID, so the check must run as the app's user.
package probehelper
