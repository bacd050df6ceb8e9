package journal

import (
	"os"
	"strings"
)

// LastLines returns up to n of the newest lines of an instance's crash
// log, newest last, as they are written (for people: bm2 status and the
// endings of serve and start quote them).
func (c CrashLog) LastLines(project, instance string, n int) []string {
	f, err := os.Open(c.Path(project, instance))
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	const tail = 16 << 10
	off := max(st.Size()-tail, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	if off > 0 && len(lines) > 0 {
		lines = lines[1:] // cut in the middle
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}
