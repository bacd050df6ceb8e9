package journal

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/safefs"
)

// errFound stops a read at the first entry.
var errFound = errors.New("found")

// Oldest returns the time of the oldest entry q selects, and false when
// it selects none. journalctl prints oldest first, and read stops it at
// the first entry: what it costs does not grow with the journal. Lines
// and Follow are not for it.
func Oldest(ctx context.Context, read func(context.Context, Query, func(Entry) error) error, q Query) (time.Time, bool, error) {
	q.Lines, q.Follow = 0, false
	var oldest time.Time
	err := read(ctx, q, func(e Entry) error {
		oldest = e.Time()
		return errFound
	})
	switch {
	case errors.Is(err, errFound):
		return oldest, true, nil
	case err != nil:
		return time.Time{}, false, err
	}
	return time.Time{}, false, nil
}

// diskUsageRE reads journalctl --disk-usage's one line: "Archived and
// active journals take up 1.1G in the file system." The figure is
// systemd's format_bytes: base 1024, one decimal from K up, a B for bytes.
var diskUsageRE = regexp.MustCompile(`take up ([0-9]+(?:\.[0-9]+)?)([KMGTPE]?)B? in`)

// DiskUsage is what journalctl --disk-usage says the journal files take
// (archived and active), in bytes, as precise as its figure (a tenth of
// its unit). That is every unit's entries together: journald keeps no
// size per unit, nor per project. With user, journalctl --user: the
// user's own journal files. A reader who may not read the whole journal
// gets ErrRestricted, not the size of the files it happens to see.
func DiskUsage(ctx context.Context, user bool) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := []string{"--no-pager", "--disk-usage"}
	if user {
		args = []string{"--no-pager", "--user", "--disk-usage"}
	}
	cmd := exec.CommandContext(ctx, "journalctl", args...)
	stderr := safefs.Capped{Max: 8 << 10}
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) || (err != nil && cmd.ProcessState == nil) {
		return 0, fmt.Errorf("%w: %v", ErrNoJournalctl, err)
	}
	msg := stderr.String()
	if !user && (strings.Contains(msg, "insufficient permissions") || strings.Contains(msg, "not seeing messages from other users")) {
		return 0, ErrRestricted
	}
	if err != nil {
		return 0, fmt.Errorf("journalctl %s: %s", strings.Join(args, " "), strings.TrimSpace(msg+" "+err.Error()))
	}
	return ParseDiskUsage(string(out))
}

// ParseDiskUsage reads the figure of journalctl --disk-usage's output.
func ParseDiskUsage(out string) (int64, error) {
	m := diskUsageRE.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("journalctl --disk-usage printed %q, not its size", strings.TrimSpace(out))
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("journalctl --disk-usage: %q: %w", m[1], err)
	}
	shift := 10 * (strings.Index("KMGTPE", m[2]) + 1)
	if m[2] == "" {
		shift = 0
	}
	if b := n * float64(int64(1)<<shift); b < 1<<62 {
		return int64(b), nil
	}
	return 1 << 62, nil // exbibytes of journal: a figure, not a fact
}
