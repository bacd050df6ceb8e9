package journal

import (
	"fmt"
	"io"
)

// Logf writes one line of the calling unit's own log, formatted as
// fmt.Printf does: bm2's helpers say what they do on their stdout, which
// systemd sends to the journal beside their events, not as events. A nil
// Logf says nothing, so that a test can leave it out.
type Logf func(format string, args ...any)

// Printf writes the line, unless l is nil.
func (l Logf) Printf(format string, args ...any) {
	if l != nil {
		l(format, args...)
	}
}

// LogTo is the Logf that writes each line to w.
func LogTo(w io.Writer) Logf {
	return func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
}
