package sockdiag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Listener is one TCP socket in state LISTEN.
type Listener struct {
	// Family is unix.AF_INET or unix.AF_INET6. A dual-stack listener
	// (bound to :: without IPV6_V6ONLY) is one AF_INET6 entry.
	Family int
	// Addr is the bound address: 0.0.0.0, ::, 127.0.0.1, ::1, ... For
	// AF_INET6 a v4-mapped address (::ffff:127.0.0.1) stays as the kernel
	// reports it. Addr has no zone: a link-local listener's interface is
	// not looked up.
	Addr netip.Addr
	Port int
	// UID is the socket's owner: the filesystem UID of the process that
	// created it, which need not be the process that holds it now.
	UID uint32
	// Inode is the socket's inode, as in /proc/<pid>/fd -> socket:[N].
	Inode uint64
	// V6Only tells whether an AF_INET6 listener set IPV6_V6ONLY. The
	// kernel reports it with every AF_INET6 socket (INET_DIAG_SKV6ONLY);
	// it is false for AF_INET, and on kernels too old to send it.
	V6Only bool
	// Queued and Backlog are the listener's accept queue: the
	// connections the kernel completed that the app has not accepted
	// yet, and how many it holds at most, the backlog the app passed to
	// listen(2) capped by net.core.somaxconn (inet_diag_msg's
	// idiag_rqueue and idiag_wqueue, which mean that for a listener).
	Queued, Backlog uint32
}

// Connection is one TCP socket in state ESTABLISHED.
type Connection struct {
	// Family is unix.AF_INET or unix.AF_INET6.
	Family int
	// UID is the socket's owner: for an accepted connection, the owner
	// of the listener it came from.
	UID uint32
	// Inode is the socket's inode, as in /proc/<pid>/fd -> socket:[N];
	// 0 for a connection still in the accept queue, which no process
	// holds yet (the kernel gives it an inode when it is accepted).
	Inode uint64
	// Port is its local port.
	Port int
	// Unread is how many bytes arrived that the app has not read yet,
	// and Unsent how many it wrote that the peer has not acknowledged
	// yet (inet_diag_msg's idiag_rqueue and idiag_wqueue): an idle
	// keep-alive connection has neither.
	Unread, Unsent uint32
	// Received and Acked are the bytes the socket has received from
	// its peer and had acknowledged by it over its life (tcp_info's
	// tcpi_bytes_received and tcpi_bytes_acked); Counted is false when
	// the kernel sent no tcp_info (then both are 0).
	Received, Acked uint64
	Counted         bool
}

// replyTimeout bounds each wait for a datagram from the kernel. The kernel
// answers a dump at once; the bound only keeps a caller from blocking
// forever should that ever not be so.
const replyTimeout = 5 * time.Second

// recvBufSize holds any dump datagram: the kernel sizes them to the
// reader's buffer but never beyond 32 KiB.
const recvBufSize = 64 << 10

// maxDumpAttempts is how often a dump the kernel flags as inconsistent
// (NLM_F_DUMP_INTR: the table changed while it was being walked) is
// started again before giving up.
const maxDumpAttempts = 3

var errDumpInterrupted = errors.New("dump interrupted by concurrent changes (NLM_F_DUMP_INTR)")

// Conn is an open NETLINK_SOCK_DIAG socket, for callers that ask often
// (the reusePort probe asks every 25 ms). Its methods may be called from
// several goroutines; the requests are serialised.
type Conn struct {
	mu     sync.Mutex
	fd     int // -1: none open (closed, or dropped after a failed dump)
	closed bool
	seq    uint32
	buf    []byte
}

// Open opens a sock_diag netlink socket. Close it when done.
func Open() (*Conn, error) {
	fd, err := openSocket()
	if err != nil {
		return nil, err
	}
	return &Conn{fd: fd, buf: make([]byte, recvBufSize)}, nil
}

func openSocket() (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return -1, fmt.Errorf("sock_diag: open netlink socket: %w", err)
	}
	tv := unix.NsecToTimeval(replyTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("sock_diag: set receive timeout: %w", err)
	}
	return fd, nil
}

// Close releases the socket. Later calls to Close do nothing; later
// calls to Listeners fail with an error wrapping net.ErrClosed.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	if err != nil {
		return fmt.Errorf("sock_diag: close: %w", err)
	}
	return nil
}

// Listeners returns every TCP listener on port (both families). It opens
// one netlink socket per call; see Conn for callers that ask often.
func Listeners(port int) ([]Listener, error) {
	return oneShot(port, (*Conn).Listeners)
}

// Established returns every TCP socket in state ESTABLISHED whose local
// port is port (both families), as [Conn.Established] does. It opens one
// netlink socket per call.
func Established(port int) ([]Connection, error) {
	return oneShot(port, (*Conn).Established)
}

// AllListeners returns every TCP listener of the host (its network
// namespace), on any port: one walk of the kernel's table of listeners,
// for a caller that wants those of many ports at once. It opens one
// netlink socket per call.
func AllListeners() ([]Listener, error) {
	return oneShot(anyPort, (*Conn).listeners)
}

// AllEstablished returns every TCP socket in state ESTABLISHED, on any
// local port: one walk of the kernel's table of connections, which a
// dump for one port walks whole as well (the table is hashed on both
// ends of a connection, not on the local port alone). It opens one
// netlink socket per call.
//
// keep, when not nil, picks the local ports whose connections are
// wanted: the others are dropped as the kernel's answer is read, so that
// however many connections the host has, only the wanted ones are held.
func AllEstablished(keep func(port int) bool) ([]Connection, error) {
	return oneShot(anyPort, func(c *Conn, port int) ([]Connection, error) { return c.established(port, keep) })
}

// anyPort asks for the sockets of every port: a request whose id.sport
// is 0 is not filtered on it.
const anyPort = 0

func oneShot[T any](port int, ask func(*Conn, int) ([]T, error)) ([]T, error) {
	c, err := Open()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return ask(c, port)
}

// Listeners returns every TCP listener on port: the AF_INET ones first,
// then the AF_INET6 ones, each family in the kernel's order. No listener
// is an empty slice, not an error.
func (c *Conn) Listeners(port int) ([]Listener, error) {
	if err := checkPort(port); err != nil {
		return nil, err
	}
	return c.listeners(port)
}

// AllListeners is [Conn.Listeners] of every port.
func (c *Conn) AllListeners() ([]Listener, error) { return c.listeners(anyPort) }

func (c *Conn) listeners(port int) ([]Listener, error) {
	return query(c, tcpListen, 0, port, "TCP listeners", func(m *diagMsg, attrs []byte) (Listener, bool) {
		l := Listener{
			Family:  int(m.Family),
			Addr:    m.ID.srcAddr(m.Family),
			Port:    int(binary.BigEndian.Uint16(m.ID.SPort[:])),
			UID:     m.UID,
			Inode:   uint64(m.Inode),
			Queued:  m.RQueue,
			Backlog: m.WQueue,
		}
		if m.Family == unix.AF_INET6 {
			l.V6Only, _ = v6Only(attrs)
		}
		return l, true
	})
}

// Established returns every TCP socket in state ESTABLISHED whose local
// port is port: the connections a server on that port accepted or has
// yet to accept, AF_INET first, then AF_INET6 (an IPv4 client of a
// dual-stack listener is an AF_INET6 socket). None is an empty slice,
// not an error. Connections in other states (closing, half closed) are
// not listed.
func (c *Conn) Established(port int) ([]Connection, error) {
	if err := checkPort(port); err != nil {
		return nil, err
	}
	return c.established(port, nil)
}

// AllEstablished is [Conn.Established] of every port.
// keep, when not nil, picks the local ports whose connections are kept.
func (c *Conn) AllEstablished(keep func(port int) bool) ([]Connection, error) {
	return c.established(anyPort, keep)
}

func (c *Conn) established(port int, keep func(port int) bool) ([]Connection, error) {
	return query(c, tcpEstablished, extInfo, port, "established TCP sockets", func(m *diagMsg, attrs []byte) (Connection, bool) {
		sport := int(binary.BigEndian.Uint16(m.ID.SPort[:]))
		if keep != nil && !keep(sport) {
			return Connection{}, false
		}
		cn := Connection{Family: int(m.Family), UID: m.UID, Inode: uint64(m.Inode), Port: sport,
			Unread: m.RQueue, Unsent: m.WQueue}
		cn.Received, cn.Acked, cn.Counted = tcpBytes(attrs)
		return cn, true
	})
}

// query asks for the TCP sockets in state on port, both families, and
// converts each with conv. Its requests are serialised on c.
// Port anyPort asks for every port.
func query[T any](c *Conn, state, ext uint8, port int, what string, conv func(m *diagMsg, attrs []byte) (T, bool)) ([]T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("sock_diag: %w", net.ErrClosed)
	}
	if c.fd < 0 {
		fd, err := openSocket()
		if err != nil {
			return nil, err
		}
		c.fd = fd
	}
	out := []T{}
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		var err error
		if out, err = dumpFamily(c, out, family, state, ext, port, conv); err != nil {
			on := fmt.Sprintf("on port %d", port)
			if port == anyPort {
				on = "on any port"
			}
			return nil, fmt.Errorf("sock_diag: list %s %s %s: %w", familyName(family), what, on, err)
		}
	}
	return out, nil
}

func checkPort(port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("sock_diag: port %d out of range 1-65535", port)
	}
	return nil
}

// dumpFamily appends the TCP sockets of one family in state on port to
// out.
//
// The kernel does the filtering. The request asks for one state only, so
// that for LISTEN the kernel walks nothing but its table of listeners,
// and it carries the port in id.sport, which the TCP dump compares with
// each socket's local port (tcp_diag has done so since it first
// appeared, in the table of listeners and in that of connections alike).
// A bytecode filter (INET_DIAG_REQ_BYTECODE with S_GE and S_LE) would
// only say the same again, so none is sent; bytecode is for what id
// cannot express, such as ranges or address prefixes. Each reply is still
// checked here (family, state, port), so that a kernel filtering less
// than asked could cost time but never give a wrong answer.
func dumpFamily[T any](c *Conn, out []T, family, state, ext uint8, port int, conv func(m *diagMsg, attrs []byte) (T, bool)) ([]T, error) {
	req := reqV2{
		Family:   family,
		Protocol: unix.IPPROTO_TCP,
		Ext:      ext,
		States:   1 << state,
		ID:       sockID{SPort: bePort(port)},
	}
	kept := len(out)
	for attempt := 1; ; attempt++ {
		err := c.dump(&req, func(m *diagMsg, attrs []byte) {
			if m.Family != family || m.State != state || (port != anyPort && m.ID.SPort != req.ID.SPort) {
				return
			}
			if v, ok := conv(m, attrs); ok {
				out = append(out, v)
			}
		})
		if errors.Is(err, errDumpInterrupted) && attempt < maxDumpAttempts {
			out = out[:kept]
			continue
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

func familyName(family uint8) string {
	if family == unix.AF_INET6 {
		return "AF_INET6"
	}
	return "AF_INET"
}

// dump sends one SOCK_DIAG_BY_FAMILY dump request and calls fn with each
// inet_diag_msg of the reply and the attributes after it, until
// NLMSG_DONE. A reply comes in as many datagrams as it needs, each
// holding one or more netlink messages.
//
// A dump not read to its end stays open in the kernel, which answers the
// next request on the socket with EBUSY; so whenever dump returns before
// NLMSG_DONE (or an error that ends the request), the socket is dropped
// and the next call opens another.
func (c *Conn) dump(req *reqV2, fn func(m *diagMsg, attrs []byte)) error {
	c.seq++
	seq := c.seq
	var b [unix.SizeofNlMsghdr + sizeofReqV2]byte
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(b[8:], seq)
	// nlmsg_pid 0: addressed to the kernel.
	req.marshal(b[unix.SizeofNlMsghdr:])

	finished := false
	defer func() {
		if !finished {
			unix.Close(c.fd)
			c.fd = -1
		}
	}()
	kernel := &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	if err := ignoringEINTR(func() error { return unix.Sendto(c.fd, b[:], 0, kernel) }); err != nil {
		return fmt.Errorf("send request: %w", err)
	}

	interrupted := false
	for {
		n, err := c.recv()
		if err != nil {
			return err
		}
		msgs := c.buf[:n]
		for len(msgs) > 0 {
			if len(msgs) < unix.SizeofNlMsghdr {
				return fmt.Errorf("short netlink message: %d bytes left in a datagram", len(msgs))
			}
			l := int(binary.NativeEndian.Uint32(msgs[0:]))
			typ := binary.NativeEndian.Uint16(msgs[4:])
			flags := binary.NativeEndian.Uint16(msgs[6:])
			mseq := binary.NativeEndian.Uint32(msgs[8:])
			if l < unix.SizeofNlMsghdr || l > len(msgs) {
				return fmt.Errorf("malformed netlink message: length %d, %d bytes left in a datagram", l, len(msgs))
			}
			body := msgs[unix.SizeofNlMsghdr:l]
			msgs = msgs[min(nlAlign(l), len(msgs)):]
			if mseq != seq {
				continue // not an answer to this request
			}
			if flags&unix.NLM_F_DUMP_INTR != 0 {
				interrupted = true
			}
			switch typ {
			case unix.NLMSG_DONE:
				finished = true
				// The payload is the dump's own result: 0, or -errno.
				if len(body) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(body)); e < 0 {
						return unix.Errno(-e)
					}
				}
				if interrupted {
					return errDumpInterrupted
				}
				return nil
			case unix.NLMSG_ERROR:
				// struct nlmsgerr: int error (-errno, or 0 for an
				// acknowledgement), then the request's header.
				if len(body) < 4 {
					return fmt.Errorf("short NLMSG_ERROR: %d bytes", len(body))
				}
				e := int32(binary.NativeEndian.Uint32(body))
				if e == 0 {
					continue
				}
				finished = true // a refused request starts no dump
				return unix.Errno(-e)
			case unix.SOCK_DIAG_BY_FAMILY:
				if len(body) < sizeofMsg {
					return fmt.Errorf("short inet_diag_msg: %d bytes", len(body))
				}
				var m diagMsg
				m.unmarshal(body)
				fn(&m, body[sizeofMsg:])
			}
		}
	}
}

// recv reads one datagram from the kernel into c.buf. A datagram from any
// other sender is dropped: netlink lets any local process send to this
// socket's address, and the answer must be the kernel's.
func (c *Conn) recv() (int, error) {
	for {
		n, _, flags, from, err := unix.Recvmsg(c.fd, c.buf, nil, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN || err == unix.EWOULDBLOCK:
			return 0, fmt.Errorf("no reply within %v", replyTimeout)
		case err != nil:
			return 0, fmt.Errorf("receive reply: %w", err)
		}
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue
		}
		if flags&unix.MSG_TRUNC != 0 {
			return 0, fmt.Errorf("reply datagram larger than %d bytes", len(c.buf))
		}
		return n, nil
	}
}

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}
