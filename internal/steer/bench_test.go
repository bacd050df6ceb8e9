package steer

import (
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// BenchmarkConnect is one loopback connection, from dial to the server's
// accept, over two listeners: by the kernel's hash, and steered. The
// steered run also reports the program's own time per run, from the
// kernel's BPF statistics (BPF_ENABLE_STATS, on for the benchmark only).
func BenchmarkConnect(b *testing.B) {
	needSteering(b)
	for _, steered := range []bool{false, true} {
		name := map[bool]string{false: "hash", true: "steered"}[steered]
		b.Run(name, func(b *testing.B) {
			port, srv := group(b, 2)
			var g *Group
			if steered {
				g = newGroup(b, port, srv)
				stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
				if err != nil {
					b.Fatal(err)
				}
				defer stats.Close()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				want := srv[0].accepts.Load() + srv[1].accepts.Load() + 1
				c, err := dial(port)
				if err != nil {
					b.Fatal(err)
				}
				for srv[0].accepts.Load()+srv[1].accepts.Load() < want {
					time.Sleep(0)
				}
				c.Close()
			}
			b.StopTimer()
			if g != nil {
				st, err := g.prog.Stats()
				if err != nil {
					b.Fatal(err)
				}
				if st.RunCount > 0 {
					b.ReportMetric(float64(st.Runtime.Nanoseconds())/float64(st.RunCount), "prog-ns/run")
				}
			}
		})
	}
}
