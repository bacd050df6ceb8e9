module github.com/bm2dev/bm2

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
