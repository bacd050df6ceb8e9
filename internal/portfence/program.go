package portfence

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// ProgName is the name every fence program carries (BPF_OBJ_NAME_LEN
// allows 15 bytes): how the step finds the programs of an earlier start on
// the same cgroup, and how Attached recognises them.
const ProgName = "bm2_port_fence"

// Offsets in struct bpf_sock_addr (include/uapi/linux/bpf.h).
const (
	offUserPort = 24 // __u32, the port in network byte order
)

// MaxPorts bounds the ports of one program: one compare each, far below
// the verifier's limits; config refuses more before anything gets here.
const MaxPorts = 64

// AttachTypes are the hooks a fence is attached to: bind(2) on IPv4 and
// IPv6 sockets.
var AttachTypes = []ebpf.AttachType{ebpf.AttachCGroupInet4Bind, ebpf.AttachCGroupInet6Bind}

// Ports returns ports sorted, without duplicates and without 0, or an
// error for a port outside 1..65535 or too many of them.
func Ports(ports []int) ([]int, error) {
	out := slices.Clone(ports)
	slices.Sort(out)
	out = slices.Compact(out)
	out = slices.DeleteFunc(out, func(p int) bool { return p == 0 })
	for _, p := range out {
		if p < 0 || p > 65535 {
			return nil, fmt.Errorf("port %d is not between 1 and 65535", p)
		}
	}
	if len(out) > MaxPorts {
		return nil, fmt.Errorf("%d ports, more than %d", len(out), MaxPorts)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no port to allow")
	}
	return out, nil
}

// Instructions is the program that allows bind() to port 0 and to each of
// ports (host byte order, as Ports returns them) and denies every other
// port (return 0: bind fails with EPERM).
//
//	r2 = ctx->user_port          // u32 load; the port is big-endian
//	r2 = be16(r2)                // host order
//	if r2 == 0 goto allow
//	if r2 == ports[i] goto allow // for each port
//	r0 = 0; exit
//	allow: r0 = 1; exit
func Instructions(ports []int) asm.Instructions { return instructions(ports, true, -1) }

// DeniedMapName is the name of the map a fence writes the port of a
// denied bind to (DeniedMapSpec): one entry, key 0, the last port denied
// (host byte order); 0 until a bind is denied.
const DeniedMapName = "bm2_denied"

// DeniedMapSpec is that map: each fence program has its own, made with
// it, so that what it holds is about the run the fence was attached for.
func DeniedMapSpec() *ebpf.MapSpec {
	return &ebpf.MapSpec{Name: DeniedMapName, Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
}

// NoBindInstructions is the program that denies every bind(), port 0 (an
// ephemeral port) included: the fence of a unit that must listen nowhere
// (a project's health check, whose child runs as the app's user). A
// connect(2) picks its local port without bind(2), and is not affected.
func NoBindInstructions() asm.Instructions { return instructions(nil, false, -1) }

// instructions is the fence allowing ports (and port 0 when ephemeral);
// with denied, the fd of a DeniedMapSpec map, a denied bind's port is
// written there first:
//
//	r7 = be16(ctx->user_port)
//	if r7 == 0 goto allow        // ephemeral
//	if r7 == ports[i] goto allow // for each port
//	key = 0; value = r7          // on the stack
//	bpf_map_update_elem(denied, &key, &value, BPF_ANY)
//	r0 = 0; exit
//	allow: r0 = 1; exit
func instructions(ports []int, ephemeral bool, denied int) asm.Instructions {
	if len(ports) == 0 && !ephemeral && denied < 0 {
		// Nothing is allowed: the verifier refuses an unreachable allow.
		return asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}
	}
	insns := asm.Instructions{
		asm.LoadMem(asm.R7, asm.R1, offUserPort, asm.Word),
		asm.HostTo(asm.BE, asm.R7, asm.Half),
	}
	if ephemeral {
		insns = append(insns, asm.JEq.Imm(asm.R7, 0, "allow"))
	}
	for _, p := range ports {
		insns = append(insns, asm.JEq.Imm(asm.R7, int32(p), "allow"))
	}
	if denied >= 0 {
		insns = append(insns,
			asm.StoreImm(asm.RFP, -4, 0, asm.Word),
			asm.StoreMem(asm.RFP, -8, asm.R7, asm.Word),
			asm.LoadMapPtr(asm.R1, denied),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, -8),
			asm.Mov.Imm(asm.R4, 0),
			asm.FnMapUpdateElem.Call(),
		)
	}
	insns = append(insns, asm.Mov.Imm(asm.R0, 0), asm.Return())
	if len(ports) == 0 && !ephemeral {
		return insns
	}
	return append(insns,
		asm.Mov.Imm(asm.R0, 1).WithSymbol("allow"),
		asm.Return(),
	)
}

// Spec is the program for one of AttachTypes.
func Spec(attach ebpf.AttachType, ports []int) *ebpf.ProgramSpec {
	return spec(attach, Instructions(ports))
}

func spec(attach ebpf.AttachType, insns asm.Instructions) *ebpf.ProgramSpec {
	return &ebpf.ProgramSpec{
		Name:         ProgName,
		Type:         ebpf.CGroupSockAddr,
		AttachType:   attach,
		Instructions: insns,
		License:      "GPL",
	}
}
