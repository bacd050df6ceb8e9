package steer

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/cilium/ebpf/asm"
)

// Every instance of the largest project has a slot, and so does its
// surge (BM2_APP_INSTANCE = instances).
func TestSlotsForEveryInstance(t *testing.T) {
	if MaxSlots < config.MaxInstances+1 {
		t.Errorf("MaxSlots %d < config.MaxInstances+1 %d (the instances and the surge)", MaxSlots, config.MaxInstances+1)
	}
}

// The program never drops a connection: every exit returns SK_PASS.
func TestProgramOnlyPasses(t *testing.T) {
	insns := Instructions(3, 4)
	calls := 0
	for i, ins := range insns {
		if ins.IsBuiltinCall() && ins.Constant == int64(asm.FnSkSelectReuseport) {
			calls++
		}
		if ins.OpCode.JumpOp() != asm.Exit {
			continue
		}
		if i == 0 || insns[i-1].OpCode != asm.Mov.Op(asm.ImmSource) || insns[i-1].Dst != asm.R0 || insns[i-1].Constant != skPass {
			t.Errorf("exit at %d not preceded by r0 = SK_PASS: %v", i, insns[i-1])
		}
	}
	if calls != 1 {
		t.Errorf("%d calls of bpf_sk_select_reuseport, want 1", calls)
	}
}

// The turn counter is a fetch-and-add in the bytes the kernel gets
// (BPF_STX|BPF_DW|BPF_ATOMIC, imm BPF_ADD|BPF_FETCH): without the fetch
// every connection goes to one slot.
func TestFetchAddEncoded(t *testing.T) {
	var buf bytes.Buffer
	insns := asm.Instructions{fetchAdd(asm.R0, asm.R7)}
	if err := insns.Marshal(&buf, binary.LittleEndian); err != nil {
		t.Fatal(err)
	}
	want := []byte{0xdb, 0x70, 0, 0, 0x01, 0, 0, 0}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("fetch-add encodes as % x, want % x", buf.Bytes(), want)
	}
}
