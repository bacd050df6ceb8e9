package registry

import (
	"slices"
	"testing"
)

func TestListenPorts(t *testing.T) {
	for _, tc := range []struct {
		listen []string
		want   []int
	}{
		{[]string{"Stream 127.0.0.1:9615"}, []int{9615}},
		{[]string{"Stream [::1]:9615", "Stream 0.0.0.0:9615"}, []int{9615}},
		{[]string{"Stream 9100", "Stream 127.0.0.1:9200"}, []int{9100, 9200}},
		{[]string{"Stream /run/bm2.sock", "Stream @abstract", "Datagram 127.0.0.1:53", "Stream 127.0.0.1:0", "Stream 127.0.0.1:70000", "junk"}, nil},
	} {
		if got := ListenPorts(tc.listen); !slices.Equal(got, tc.want) {
			t.Errorf("ListenPorts(%q) = %v, want %v", tc.listen, got, tc.want)
		}
	}
}
