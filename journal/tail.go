package journal

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// UnitTail returns the last n lines a unit's processes logged (the
// app's own output, which says why it failed), or, when they logged
// nothing, the last n lines about the unit, systemd's included
// (journalctl -u UNIT -n N -o cat --no-pager).
func UnitTail(ctx context.Context, unit string, n int) ([]string, error) {
	lines, err := journalctl(ctx, "_SYSTEMD_UNIT="+unit, "-n", fmt.Sprint(n))
	if err == nil && len(lines) > 0 {
		return lines, nil
	}
	return journalctl(ctx, "-u", unit, "-n", fmt.Sprint(n))
}

// UserUnitTail is UnitTail of a user's unit: the last n lines its
// processes logged (as uid), or, when they logged nothing, the last n
// lines about it (journalctl --user-unit UNIT -n N -o cat --no-pager).
func UserUnitTail(ctx context.Context, uid int, unit string, n int) ([]string, error) {
	lines, err := journalctl(ctx, "_SYSTEMD_USER_UNIT="+unit, "_UID="+strconv.Itoa(uid), "-n", fmt.Sprint(n))
	if err == nil && len(lines) > 0 {
		return lines, nil
	}
	return journalctl(ctx, "--user-unit", unit, "-n", fmt.Sprint(n))
}

// journalctl runs journalctl with args, its output as plain lines.
func journalctl(ctx context.Context, args ...string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	args = append(args, "-o", "cat", "--no-pager")
	out, err := exec.CommandContext(ctx, "journalctl", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("journalctl %s: %w", strings.Join(args, " "), err)
	}
	text := strings.TrimRight(string(out), "\n")
	if text == "" || text == "-- No entries --" {
		return nil, nil
	}
	return strings.Split(text, "\n"), nil
}
