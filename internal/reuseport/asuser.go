package reuseport

import (
	"github.com/bm2dev/bm2/internal/identity"
)

// CheckPortAs is [CheckPort] with the sockets created as id (identity.Do):
// a socket belongs to the filesystem UID of the thread that creates it,
// and SO_REUSEPORT lets it join a port group only when that is the
// listeners' user. When it cannot take id (it is not root), it returns
// identity.ErrNotPermitted and no state: it never answers for a user it
// could not become.
func CheckPortAs(id identity.Identity, port int) (PortState, error) {
	var s PortState
	err := identity.Do(id, func() error {
		var err error
		s, err = CheckPort(port)
		return err
	})
	return s, err
}

// CheckPortsAs checks several ports as id, stopping at the first error.
func CheckPortsAs(id identity.Identity, ports []int) ([]PortState, error) {
	out := make([]PortState, len(ports))
	for i, p := range ports {
		s, err := CheckPortAs(id, p)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}
