// Package sockdiag asks the kernel which TCP sockets listen on a port, and
// which are connected to it.
//
// Four parts of bm2 need those answers. The reusePort probe watches an
// instance come up and must see the moment it listens: it keeps one [Conn]
// open and asks [Conn.Listeners] every 25 ms. The CLI names who holds a
// port when it cannot be had:
//
//	port 3000 is held by nginx (pid 812), uid 33 (www-data)
//
// from [Listeners] (the socket, its owner's UID and inode) and [OwnerOf]
// (the process holding that inode). bm2 metrics counts each instance's
// connections and accept queue: [Established] and [Listeners] (with its
// Queued and Backlog) on the instance's port, kept to the sockets the
// instance's own processes hold ([SocketsOf]). A cluster instance
// taken out of the kernel-steered turn (bm2-probe steer drain) waits
// until its accept queue is empty and none of its connections has bytes
// unread or unsent ([Connection]'s Unread and Unsent) but keep-alive
// connections still carrying requests (their Received and Acked, from
// tcp_info, both grow); bm2-probe steer
// add finds the descriptor of the instance's listener to copy
// ([Holder]).
//
// The question goes through netlink (NETLINK_SOCK_DIAG, the interface
// behind ss(8)): one SOCK_DIAG_BY_FAMILY dump request per address family,
// asking for TCP sockets in one state (LISTEN, or ESTABLISHED) on the
// port. Unlike reading /proc/net/tcp, which formats every socket of the
// host as text, the kernel compares state and port itself and sends back
// a few binary records; for LISTEN it walks only its table of listeners.
// A request needs no privilege: any user sees every socket, with its
// owner's UID, as ss(8) shows them.
//
// The kernel answers for the caller's network namespace only. Sockets of
// other namespaces (a unit with PrivateNetwork=, a container) are not
// listed, and are not an error: from here, nobody listens.
//
// [OwnerOf], [Holds], [Holder] and [SocketsOf] are the parts that read /proc, all
// through one walker of /proc/<pid>/fd: OwnerOf looks for the socket's
// inode among the file descriptors of every process, which takes root for
// processes of other users. SocketsOf reads at most [MaxFDs] descriptors
// of a process, so that an app holding a million cannot make a reader as
// slow as it likes.
package sockdiag
