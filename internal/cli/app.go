package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
)

// App is the bm2 command: the command line, the user's streams and the
// rendering of what a command reports on them. What it does to the host
// goes through c, a client that never speaks to the user itself.
type App struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	c   *control.Client
}

// newApp is the bm2 command on stdio, acting through c.
func newApp(stdio Stdio, c *control.Client) *App {
	return &App{In: stdio.In, Out: stdio.Out, Err: stdio.Err, c: c}
}

// The types a caller of package cli names, from package control.
type (
	Env        = control.Env
	Systemd    = control.Systemd
	UnitStatus = view.UnitStatus
)

// Stdio is where a command reads and writes. cmd/bm2 passes the process's
// standard streams; tests pass buffers.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// entry is a project file found on the search path, valid or not.
type entry = config.Entry

// Run runs the bm2 command line args (without the program name) with the
// real environment.
func Run(ctx context.Context, args []string, stdio Stdio) error {
	app := newApp(stdio, &control.Client{})
	return app.Run(ctx, args)
}

// Main runs args, reports an error as "bm2: <error>" plus a hint on stderr
// and returns the exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	app := newApp(stdio, &control.Client{})
	return app.Main(ctx, args)
}

// Main is [Main] with this app's environment. Everything it prints goes
// through a termtext.Writer: the renderers escape what the apps and the
// journal say, field by field, and whatever one of them missed is still
// shown escaped rather than obeyed by the terminal (newlines and tabs
// pass; --json output has no control character to escape).
func (a *App) Main(ctx context.Context, args []string) int {
	if a.Out != nil {
		out := termtext.NewWriter(a.Out)
		defer out.Flush()
		a.Out = out
	}
	if a.Err != nil {
		errw := termtext.NewWriter(a.Err)
		defer errw.Flush()
		a.Err = errw
	}
	err := a.Run(ctx, args)
	if err == nil {
		return ExitOK
	}
	a.report(err)
	return ExitCode(err)
}

// Run runs one bm2 command line.
func (a *App) Run(ctx context.Context, args []string) error {
	if a.Out == nil {
		a.Out = io.Discard
	}
	if a.Err == nil {
		a.Err = io.Discard
	}
	if a.In == nil {
		a.In = strings.NewReader("")
	}
	args, choice, err := takeScope(args)
	if err != nil {
		return err
	}
	if a.c.Layout == nil || choice != "" {
		l, err := control.ChooseScope(choice)
		if err != nil {
			return err
		}
		a.c.Layout = &l
	}
	a.c.Env = a.c.Env.WithDefaults()
	a.c.Report = render{a}
	return a.dispatch(ctx, args)
}

// report prints an error the way users see it: every line prefixed with
// "bm2: ", then the hint.
func (a *App) report(err error) {
	msg := err.Error()
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintf(a.Err, "bm2: %s\n", line)
	}
	h := hint(err)
	if a.c.Scope().IsUser() && ExitCode(err) == ExitNoSystemd {
		// Whatever the command's own hint says, a user whose manager is
		// not running is told how to have one.
		if own := control.FixOf(err); own == "" {
			h = scope.UserManagerHint(a.c.Scope().Layout())
		} else {
			h = own + "\nbm2: " + scope.UserManagerHint(a.c.Scope().Layout())
		}
	}
	if h != "" {
		fmt.Fprintf(a.Err, "bm2: %s\n", h)
	}
}
