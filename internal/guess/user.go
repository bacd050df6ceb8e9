package guess

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/bm2dev/bm2/internal/trust"
	"golang.org/x/sys/unix"
)

// DirUser is the account bm2 init writes as user: the directory's owner
// when the project's own account could not enter dir (a home directory
// closed to other accounts), named from accounts (nil: by number), with
// the directory that is closed; "" when its own account can, or the
// owner is root.
func DirUser(dir string, accounts trust.Accounts) (owner, closed string) {
	for d := dir; ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			closed = d
		}
		if d == "/" || d == "." {
			break
		}
	}
	if closed == "" {
		return "", ""
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil || st.Uid == 0 {
		return "", ""
	}
	if accounts != nil {
		if u, err := accounts.UserID(int(st.Uid)); err == nil && u.Name != "" {
			return u.Name, closed
		}
	}
	return strconv.Itoa(int(st.Uid)), closed
}
