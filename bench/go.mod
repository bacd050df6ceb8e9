module github.com/bm2dev/bm2/bench

go 1.26.0

require (
	github.com/bm2dev/bm2 v0.0.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/coreos/go-systemd/v22 v22.7.0 // indirect
)

replace github.com/bm2dev/bm2 => ../
