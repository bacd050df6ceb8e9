package buildinfo

import (
	"os"
	"strings"
	"testing"
)

// The Debian package sets version at link time; the linker ignores
// -X for a symbol that does not exist, so the name in debian/rules must
// be this variable's.
func TestPackagingSetsBuildVersion(t *testing.T) {
	data, err := os.ReadFile("../../debian/rules")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "-X=github.com/bm2dev/bm2/internal/buildinfo.version=") {
		t.Error("debian/rules does not set github.com/bm2dev/bm2/internal/buildinfo.version: the package's bm2 version would say devel")
	}
}
