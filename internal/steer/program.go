package steer

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// Names of the kernel objects (BPF_OBJ_NAME_LEN allows 15 bytes), as
// bpftool shows them.
const (
	ProgName  = "bm2_steer"
	TableName = "bm2_steer_tbl"
	SocksName = "bm2_steer_socks"
)

// MaxSlots is the most instances one group steers to: a slot is an
// instance number (0 for bm2@app-0, BM2_APP_INSTANCE), and a project has
// at most config.MaxInstances of them (1024), plus the surge a reload
// starts beside them, whose BM2_APP_INSTANCE is the project's instance
// count: slot 1024 at most.
const MaxSlots = 1025

// The table is one ARRAY map of u64 values, mapped into the memory of the
// process that holds the Group (BPF_F_MMAPABLE), so that each entry is
// written with one atomic store in a known order:
//
//	[idxRuns]         how many times the program ran (it adds 1 atomically)
//	[idxPort]         the group's port, for Open to check new listeners
//	[idxFamily]       AF_INET or AF_INET6 once a listener is known, else 0
//	[idxLive]         n, how many slots are live
//	[idxSlots+i]      for i < n, the slot of the i-th live instance
//
// The counter's cache line holds nothing else the program reads: it is
// written on every connection, the rest only read.
const (
	idxRuns    = 0
	idxPort    = 1
	idxFamily  = 2
	idxLive    = 8
	idxSlots   = 9
	tableSize  = idxSlots + MaxSlots
	entrySize  = 8
	skPass     = 1 // SK_PASS; SK_DROP (0) is never returned
	stackZero  = -4
	stackIndex = -8
	stackSlot  = -12
)

// TableSpec is the table's map: ARRAY, u32 keys, u64 values, mappable.
func TableSpec() *ebpf.MapSpec {
	return &ebpf.MapSpec{
		Name:       TableName,
		Type:       ebpf.Array,
		KeySize:    4,
		ValueSize:  entrySize,
		MaxEntries: tableSize,
		Flags:      unix.BPF_F_MMAPABLE,
	}
}

// SocksSpec is the sockarray: slot → listening socket. Userspace writes
// a socket's fd (u64) and reads back its cookie; 8-byte values allow both
// (with 4, a lookup fails with ENOSPC).
func SocksSpec() *ebpf.MapSpec {
	return &ebpf.MapSpec{
		Name:       SocksName,
		Type:       ebpf.ReusePortSockArray,
		KeySize:    4,
		ValueSize:  8,
		MaxEntries: MaxSlots,
	}
}

// Instructions is the program, given the fds of the table and of the
// sockarray. It never drops a connection: whatever goes wrong (no live
// slot, an empty slot, a socket of another group) it returns SK_PASS
// without a selection and the kernel picks by its hash as it would
// without a program.
//
//	r6 = ctx
//	key = 0; r0 = &table[idxRuns]
//	r7 = fetch_add(*r0, 1)                // this connection's turn
//	key = idxLive; r8 = table[idxLive]    // n
//	if n == 0 goto pass
//	r7 %= n                               // 64-bit
//	key = idxSlots + r7; r7 = table[key]  // the slot
//	bpf_sk_select_reuseport(ctx, socks, &slot, 0)
//	pass: return SK_PASS
//
// The same program serves the migration of a closing listener's pending
// connections (ctx->migrating_sk set, attach type SELECT_OR_MIGRATE): they
// go round-robin to the live slots, or by hash to the other listeners.
func Instructions(table, socks int) asm.Instructions {
	lookup := func(key int16) asm.Instructions {
		return asm.Instructions{
			asm.LoadMapPtr(asm.R1, table),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, int32(key)),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "pass"),
		}
	}
	var insns asm.Instructions
	insns = append(insns,
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.StoreImm(asm.RFP, stackZero, idxRuns, asm.Word),
	)
	insns = append(insns, lookup(stackZero)...)
	insns = append(insns,
		asm.Mov.Imm(asm.R7, 1),
		fetchAdd(asm.R0, asm.R7),
		asm.StoreImm(asm.RFP, stackIndex, idxLive, asm.Word),
	)
	insns = append(insns, lookup(stackIndex)...)
	insns = append(insns,
		asm.LoadMem(asm.R8, asm.R0, 0, asm.DWord),
		asm.JEq.Imm(asm.R8, 0, "pass"),
		asm.Mod.Reg(asm.R7, asm.R8),
		asm.Add.Imm(asm.R7, idxSlots),
		asm.StoreMem(asm.RFP, stackIndex, asm.R7, asm.Word),
	)
	insns = append(insns, lookup(stackIndex)...)
	return append(insns,
		asm.LoadMem(asm.R7, asm.R0, 0, asm.DWord),
		asm.StoreMem(asm.RFP, stackSlot, asm.R7, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, socks),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, stackSlot),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnSkSelectReuseport.Call(),
		asm.Mov.Imm(asm.R0, skPass).WithSymbol("pass"),
		asm.Return(),
	)
}

// fetchAdd is `r(src) = atomic_fetch_add((u64 *)(dst + 0), r(src))`.
// cilium/ebpf v0.22's Instruction.Marshal takes the immediate from
// Constant before it folds the atomic operation into it, so the BPF_FETCH
// of asm.FetchAdd.Mem alone never reaches the kernel: the kernel gets a
// plain atomic add, src keeps its 1, and every connection goes to the same
// slot. The immediate is set here as the ISA defines it.
func fetchAdd(dst, src asm.Register) asm.Instruction {
	ins := asm.FetchAdd.Mem(dst, src, asm.DWord, 0)
	ins.Constant = bpfAdd | bpfFetch
	return ins
}

// The immediate of an atomic instruction (include/uapi/linux/bpf.h).
const (
	bpfAdd   = 0x00
	bpfFetch = 0x01
)

// Spec is the program: SK_REUSEPORT with the SELECT_OR_MIGRATE attach
// type (Linux 5.14), so that it also places the connections a closing
// listener still had queued.
func Spec(table, socks int) *ebpf.ProgramSpec {
	return &ebpf.ProgramSpec{
		Name:         ProgName,
		Type:         ebpf.SkReuseport,
		AttachType:   ebpf.AttachSkReuseportSelectOrMigrate,
		Instructions: Instructions(table, socks),
		License:      "GPL",
	}
}
