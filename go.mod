module github.com/bm2dev/bm2

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/cilium/ebpf v0.22.0
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/godbus/dbus/v5 v5.2.4
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.50.0
)

require go.yaml.in/yaml/v3 v3.0.6
