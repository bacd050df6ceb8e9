package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/layout"
)

// PolkitDaemon is polkit's daemon: without it, logind refuses a user's
// own request to linger.
var PolkitDaemon = "/usr/lib/polkit-1/polkitd"

// Startup is `bm2 startup`: make the projects start at boot. System
// projects do already (their targets are wanted by multi-user.target); a
// user's need their manager to run without a session: lingering.
func (c *Client) Startup(ctx context.Context) error {
	l := c.Scope().Layout()
	if !l.IsUser() {
		say(c.Report, "%s", "system scope: every registered project starts at boot already (its target is wanted by multi-user.target); nothing to do")
		return nil
	}
	if l.Lingering() {
		say(c.Report, "lingering is on for %s already: your projects start at boot and keep running after you log out", l.Name)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// loginctl asks logind over the system bus; logind asks polkit whether
	// a user may set lingering for themselves.
	cmd := exec.CommandContext(ctx, "loginctl", "enable-linger", l.Name)
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	if err == nil && l.Lingering() {
		say(c.Report, "lingering is on for %s: your projects now start at boot and keep running after you log out (loginctl disable-linger undoes it)", l.Name)
		return nil
	}
	why := strings.TrimSpace(string(out))
	if errors.Is(err, exec.ErrNotFound) {
		why = "loginctl is not installed (package systemd)"
	} else if why == "" && err != nil {
		why = err.Error()
	} else if why == "" {
		why = "logind reported success, but " + layout.LingerFile(l.Name) + " is not there"
	}
	hint := fmt.Sprintf("ask an administrator to run `sudo loginctl enable-linger %s`", l.Name)
	if _, serr := os.Stat(PolkitDaemon); serr != nil {
		hint = fmt.Sprintf("logind lets a user enable lingering only through polkit, and polkitd is not installed (sudo apt-get install polkitd); or ask an administrator to run `sudo loginctl enable-linger %s`", l.Name)
	}
	return fail(Failed, hint, fmt.Errorf("could not enable lingering for %s: %s", l.Name, why))
}
