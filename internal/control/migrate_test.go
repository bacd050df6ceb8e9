package control

import "testing"

func TestLoopbackURL(t *testing.T) {
	for u, want := range map[string]bool{
		"http://127.0.0.1:9000/hook": true, "http://127.9.9.9/": true, "http://[::1]:80/": true, "http://localhost/x": true,
		"http://LOCALHOST./x": true, "http://api.localhost/": true, "http://[::ffff:127.0.0.1]/": true,
		"https://hooks.example.com/x": false, "http://10.0.0.1/": false, "http://169.254.169.254/": false, "::": false,
	} {
		if got := loopbackURL(u); got != want {
			t.Errorf("loopbackURL(%q) = %v", u, got)
		}
	}
}
