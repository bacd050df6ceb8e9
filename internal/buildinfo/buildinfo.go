// Package buildinfo is the version bm2 says it is (bm2 version, bm2
// metrics' bm2_build_info): what packaging set at link time, else what
// the Go toolchain recorded of the build.
package buildinfo

import "runtime/debug"

// version is set at link time by packaging (-ldflags
// "-X github.com/bm2dev/bm2/internal/buildinfo.version=1.2.3"); otherwise
// the module version or VCS revision from the build info is used.
var version string

// Version is the version bm2 says it is, and the Go toolchain that
// built it ("" when the binary has no build info): version when
// packaging set it, else the module's version, else "devel-<revision>"
// (with "-dirty" for a modified tree), else "devel".
func Version() (v, goVersion string) {
	v = version
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		if v == "" {
			rev, dirty := "", false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" {
				v = "devel-" + rev
				if dirty {
					v += "-dirty"
				}
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	return v, goVersion
}
