package jsruntime

import (
	"context"

	"github.com/bm2dev/bm2/internal/identity"
)

// AskVersionAs runs a runtime's --version as id: directly when that is who
// runs bm2, as id's child process when bm2 runs as root (a runtime id can
// replace must never run as root), and not at all otherwise.
func AskVersionAs(ctx context.Context, id identity.Identity, path string) (string, error) {
	self := identity.Self()
	switch {
	case id.UID == self.UID:
		return AskVersion(ctx, path)
	case self.UID == 0:
		return AsUser(id.UID, id.GID)(ctx, path)
	}
	// Not root and not the project's user: our own run of it tells the
	// version as well, and harms nobody but ourselves.
	return AskVersion(ctx, path)
}
