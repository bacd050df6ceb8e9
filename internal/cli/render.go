package cli

import (
	"fmt"

	"github.com/bm2dev/bm2/internal/control"
)

// render is the [control.Reporter] of an App: what a command reports as
// it goes, on the App's streams as they are when it is said (Main puts
// them behind termtext writers first). Its lines on stdout, the rest on
// stderr behind "bm2: ", as every word of bm2's own there is.
type render struct{ a *App }

var _ control.Reporter = render{}

func (r render) Did(line string)      { fmt.Fprintln(r.a.Out, line) }
func (r render) Progress(text string) { fmt.Fprint(r.a.Out, text) }
func (r render) Warn(msg string)      { fmt.Fprintf(r.a.Err, "bm2: warning: %s\n", msg) }
func (r render) Note(msg string)      { fmt.Fprintf(r.a.Err, "bm2: note: %s\n", msg) }
func (r render) Aside(msg string)     { fmt.Fprintf(r.a.Err, "bm2: %s\n", msg) }
