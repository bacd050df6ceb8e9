package cli

import "github.com/bm2dev/bm2/internal/layout"

// Scope flags, accepted before or after the command (bm2 --user list,
// bm2 list --user).
const (
	flagUser   = "--user"
	flagSystem = "--system"
)

// takeScope removes the scope flags from a command line (up to a "--")
// and says which was given: "", "user" or "system".
func takeScope(args []string) (rest []string, choice layout.Kind, err error) {
	rest = make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		switch a {
		case flagUser, flagSystem:
			k := layout.UserScope
			if a == flagSystem {
				k = layout.SystemScope
			}
			if choice != "" && choice != k {
				return nil, "", usageErr("", "--user and --system exclude each other")
			}
			choice = k
		default:
			rest = append(rest, a)
		}
	}
	return rest, choice, nil
}
