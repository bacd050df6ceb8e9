package crashlog

import (
	"os"
	"strings"
	"syscall"

	"github.com/bm2dev/bm2/internal/safefs"
)

// LastLines returns up to n of the newest lines of an instance's crash
// log, newest last, as they are written (for people: bm2 status and the
// endings of serve and start quote them). Lines of the previous log
// (<path>.1, when it has been rotated) make up for a young one.
func (c Logs) LastLines(project, instance string, n int) []string {
	p := c.Path(project, instance)
	lines := tailLines(p, n)
	if len(lines) < n {
		lines = append(tailLines(p+".1", n-len(lines)), lines...)
	}
	return lines
}

// tailLines reads the newest n lines of a crash log: a regular file, not
// followed through a link, opened without waiting (a FIFO in its place
// holds no lines).
func tailLines(path string, n int) []string {
	f, err := safefs.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return nil
	}
	const tail = 16 << 10
	off := max(st.Size()-tail, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil
	}
	text := strings.TrimRight(string(buf), "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if off > 0 {
		lines = lines[1:] // cut in the middle
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
