package generator

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// BackoffVersion is the first systemd with a restart backoff
// (RestartSteps= and RestartMaxDelaySec=, systemd.service(5)): older
// ones refuse the directives, and restart_delay_max_ms is not written
// for them; every restart waits restart_delay_ms.
const BackoffVersion = 254

// RestartSteps is the RestartSteps= of a project with
// restart_delay_max_ms: systemd takes the delay from RestartSec= to
// RestartMaxDelaySec= in that many restarts, growing exponentially
// (RestartSec= plus (max - RestartSec=) to the power n/steps), and holds
// it at the max from then on. A fixed number, not one derived from the
// two delays: every project's crash loop reaches its cap on the fifth
// restart in a row, within seconds of the first crash (PM2's backoff,
// x1.5 a restart, takes about 12 restarts from 100 ms to its 15 s).
const RestartSteps = 5

// Backoff tells whether a project's units get the backoff on a systemd
// of version v (0: not known, taken for one without it).
func Backoff(v int) bool { return v >= BackoffVersion }

// RestartModeVersion is the first systemd with RestartMode=, and the
// first whose services pass through the failed state on their way to an
// automatic restart: that state starts their OnFailure= unit (bm2's
// give-up record, bm2-failed@) at every crash, and shows the instance
// failed to whoever looks at that moment. RestartMode=direct restarts
// them as every systemd before did: ExecStopPost= still runs, OnFailure=
// waits until the restart budget is used up.
const RestartModeVersion = 254

// RestartDirect tells whether a project's units get RestartMode=direct on
// a systemd of version v (0: not known, taken for one without it).
func RestartDirect(v int) bool { return v >= RestartModeVersion }

// ParseSystemdVersion reads the version from the first line `systemctl
// --version` prints, "systemd 252 (252.38-1~deb12u1)"; 0 when it is not
// that.
func ParseSystemdVersion(out []byte) int {
	line, _, _ := bytes.Cut(out, []byte("\n"))
	rest, ok := strings.CutPrefix(string(line), "systemd ")
	if !ok {
		return 0
	}
	word, _, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(word)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// versionTimeout bounds `systemctl --version`, which reads no state and
// talks to no manager (the one running the generator is busy waiting for
// it): a few milliseconds, unless the host is in trouble.
const versionTimeout = 500 * time.Millisecond

// DetectSystemdVersion is the installed systemd's version, from
// `systemctl --version` (the manager that runs the generator is the
// installed one: packages re-execute it on upgrade); 0 when it cannot be
// told, which Generate takes for a systemd without the backoff.
func DetectSystemdVersion(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	// The installed systemctl by its path, as the units name bm2's own
	// binaries: a generator's PATH may be bare, and a user's generator
	// gets the user's.
	path := "/usr/bin/systemctl"
	if _, err := os.Stat(path); err != nil {
		if path, err = exec.LookPath("systemctl"); err != nil {
			return 0
		}
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return 0
	}
	return ParseSystemdVersion(out)
}
