package sockdiag

import (
	"encoding/binary"
	"net/netip"

	"golang.org/x/sys/unix"
)

// The inet_diag wire format, from linux/inet_diag.h. golang.org/x/sys/unix
// has the netlink header and the constants but not these structs. Every
// field is in host byte order except the ports and the addresses, which
// are in network byte order, as on the wire of the network itself.

const (
	// struct inet_diag_sockid {
	//	__be16 idiag_sport;       // 0
	//	__be16 idiag_dport;       // 2
	//	__be32 idiag_src[4];      // 4
	//	__be32 idiag_dst[4];      // 20
	//	__u32  idiag_if;          // 36
	//	__u32  idiag_cookie[2];   // 40
	// };                         // 48
	sizeofSockID = 48

	// struct inet_diag_req_v2 {
	//	__u8  sdiag_family;       // 0
	//	__u8  sdiag_protocol;     // 1
	//	__u8  idiag_ext;          // 2
	//	__u8  pad;                // 3
	//	__u32 idiag_states;       // 4
	//	struct inet_diag_sockid id; // 8
	// };                         // 56
	sizeofReqV2 = 8 + sizeofSockID

	// struct inet_diag_msg {
	//	__u8  idiag_family;       // 0
	//	__u8  idiag_state;        // 1
	//	__u8  idiag_timer;        // 2
	//	__u8  idiag_retrans;      // 3
	//	struct inet_diag_sockid id; // 4
	//	__u32 idiag_expires;      // 52
	//	__u32 idiag_rqueue;       // 56
	//	__u32 idiag_wqueue;       // 60
	//	__u32 idiag_uid;          // 64
	//	__u32 idiag_inode;        // 68
	// };                         // 72
	sizeofMsg = 4 + sizeofSockID + 20

	// A reply attribute (struct nlattr): __u16 nla_len, __u16 nla_type.
	sizeofAttr = 4
	// nla_type carries two flag bits above the type itself.
	attrTypeMask = 0x3fff

	// INET_DIAG_SKV6ONLY: a __u8 the kernel attaches to every AF_INET6
	// socket it reports, IPV6_V6ONLY as set on the socket.
	attrSKV6Only = 11

	// INET_DIAG_INFO: struct tcp_info, sent when the request's
	// idiag_ext has bit INET_DIAG_INFO-1 (extInfo). Of it bm2 reads
	// tcpi_bytes_acked and tcpi_bytes_received (both __u64, since
	// Linux 4.1), at these offsets of include/uapi/linux/tcp.h's layout.
	attrInfo             = 2
	extInfo              = 1 << (attrInfo - 1)
	tcpInfoBytesAcked    = 120
	tcpInfoBytesReceived = 128

	// TCP_ESTABLISHED and TCP_LISTEN in the kernel's TCP state enum
	// (include/net/tcp_states.h).
	tcpEstablished = 1
	tcpListen      = 10
)

// sockID is struct inet_diag_sockid. Ports and addresses keep the
// kernel's network byte order; Port and Addr convert them.
type sockID struct {
	SPort  [2]byte
	DPort  [2]byte
	Src    [16]byte
	Dst    [16]byte
	If     uint32
	Cookie [2]uint32
}

func (id *sockID) marshal(b []byte) {
	copy(b[0:2], id.SPort[:])
	copy(b[2:4], id.DPort[:])
	copy(b[4:20], id.Src[:])
	copy(b[20:36], id.Dst[:])
	binary.NativeEndian.PutUint32(b[36:], id.If)
	binary.NativeEndian.PutUint32(b[40:], id.Cookie[0])
	binary.NativeEndian.PutUint32(b[44:], id.Cookie[1])
}

func (id *sockID) unmarshal(b []byte) {
	copy(id.SPort[:], b[0:2])
	copy(id.DPort[:], b[2:4])
	copy(id.Src[:], b[4:20])
	copy(id.Dst[:], b[20:36])
	id.If = binary.NativeEndian.Uint32(b[36:])
	id.Cookie[0] = binary.NativeEndian.Uint32(b[40:])
	id.Cookie[1] = binary.NativeEndian.Uint32(b[44:])
}

// bePort is a port in network byte order, as idiag_sport holds it.
func bePort(port int) [2]byte {
	var p [2]byte
	binary.BigEndian.PutUint16(p[:], uint16(port))
	return p
}

// srcAddr is the socket's local address: the first 4 bytes of idiag_src
// for AF_INET, all 16 for AF_INET6 (a v4-mapped address stays mapped).
func (id *sockID) srcAddr(family uint8) netip.Addr {
	if family == unix.AF_INET {
		return netip.AddrFrom4([4]byte(id.Src[:4]))
	}
	return netip.AddrFrom16(id.Src)
}

// reqV2 is struct inet_diag_req_v2.
type reqV2 struct {
	Family   uint8
	Protocol uint8
	Ext      uint8
	Pad      uint8
	States   uint32
	ID       sockID
}

func (r *reqV2) marshal(b []byte) {
	b[0] = r.Family
	b[1] = r.Protocol
	b[2] = r.Ext
	b[3] = r.Pad
	binary.NativeEndian.PutUint32(b[4:], r.States)
	r.ID.marshal(b[8 : 8+sizeofSockID])
}

// diagMsg is struct inet_diag_msg, the head of every reply.
type diagMsg struct {
	Family  uint8
	State   uint8
	Timer   uint8
	Retrans uint8
	ID      sockID
	Expires uint32
	RQueue  uint32
	WQueue  uint32
	UID     uint32
	Inode   uint32
}

func (m *diagMsg) unmarshal(b []byte) {
	m.Family = b[0]
	m.State = b[1]
	m.Timer = b[2]
	m.Retrans = b[3]
	m.ID.unmarshal(b[4 : 4+sizeofSockID])
	o := 4 + sizeofSockID
	m.Expires = binary.NativeEndian.Uint32(b[o:])
	m.RQueue = binary.NativeEndian.Uint32(b[o+4:])
	m.WQueue = binary.NativeEndian.Uint32(b[o+8:])
	m.UID = binary.NativeEndian.Uint32(b[o+12:])
	m.Inode = binary.NativeEndian.Uint32(b[o+16:])
}

// nlAlign rounds n up to the 4-byte alignment of netlink messages and
// attributes (NLMSG_ALIGN, NLA_ALIGN).
func nlAlign(n int) int {
	return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1)
}

// v6Only reads INET_DIAG_SKV6ONLY from the attributes after an
// inet_diag_msg. known is false when the kernel did not send it.
func v6Only(attrs []byte) (v6only, known bool) {
	for len(attrs) >= sizeofAttr {
		l := int(binary.NativeEndian.Uint16(attrs[0:]))
		typ := binary.NativeEndian.Uint16(attrs[2:]) & attrTypeMask
		if l < sizeofAttr || l > len(attrs) {
			return false, false
		}
		if typ == attrSKV6Only && l > sizeofAttr {
			return attrs[sizeofAttr] != 0, true
		}
		attrs = attrs[min(nlAlign(l), len(attrs)):]
	}
	return false, false
}

// tcpBytes reads tcpi_bytes_received and tcpi_bytes_acked from the
// INET_DIAG_INFO attribute after an inet_diag_msg; counted is false when
// the kernel sent none, or one too short to hold them.
func tcpBytes(attrs []byte) (received, acked uint64, counted bool) {
	for len(attrs) >= sizeofAttr {
		l := int(binary.NativeEndian.Uint16(attrs[0:]))
		typ := binary.NativeEndian.Uint16(attrs[2:]) & attrTypeMask
		if l < sizeofAttr || l > len(attrs) {
			return 0, 0, false
		}
		if typ == attrInfo {
			info := attrs[sizeofAttr:l]
			if len(info) < tcpInfoBytesReceived+8 {
				return 0, 0, false
			}
			return binary.NativeEndian.Uint64(info[tcpInfoBytesReceived:]), binary.NativeEndian.Uint64(info[tcpInfoBytesAcked:]), true
		}
		attrs = attrs[min(nlAlign(l), len(attrs)):]
	}
	return 0, 0, false
}
