package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/buildinfo"
	"github.com/bm2dev/bm2/internal/metrics"
	"github.com/bm2dev/bm2/internal/scrape"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/coreos/go-systemd/v22/activation"
)

// metricsCmd is `bm2 metrics [--http] [name...]`.
func (a *App) metricsCmd(ctx context.Context, names []string, overHTTP bool) error {
	if overHTTP {
		a.metricsHTTP(ctx, names)
		return nil
	}
	text, warnings, err := a.exposition(ctx, names)
	if err != nil {
		return err
	}
	if _, err := a.Out.Write(text); err != nil {
		return fmt.Errorf("write metrics: %w", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(a.Err, "bm2: warning: %s\n", w)
	}
	return nil
}

// exposition reads the state and figures of the named projects (every
// registered one when none is named), as bm2 list reads them, and renders
// them; warnings say what could not be read.
func (a *App) exposition(ctx context.Context, names []string) ([]byte, []string, error) {
	rd := a.reader()
	entries, found, err := rd.Select(names)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	snap, figs := rd.SnapshotFigures(ctx, entries, func(w string) { warnings = append(warnings, w) })
	warnings = append(warnings, view.Warnings(snap)...)
	warnings = append(warnings, figs.Warnings...)
	if len(names) == 0 {
		for _, err := range found.Errors {
			warnings = append(warnings, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	version, goVersion := buildinfo.Version()
	text, err := metrics.Text(snap, figs, metrics.Build{Version: version, GoVersion: goVersion})
	return text, warnings, err
}

// metricsHTTP is `bm2 metrics --http`: one HTTP exchange on standard
// input, the connection a socket unit with Accept=yes hands over (or, when
// standard input is not a socket, the request from standard input and
// the answer on standard output). The connection is the client's, and so
// may be standard error too (systemd's default for StandardError= is the
// socket): warnings then go to the journal instead, never into the answer.
func (a *App) metricsHTTP(ctx context.Context, names []string) {
	var in io.Reader = a.In
	out := raw(a.Out)
	if f, ok := a.In.(*os.File); ok {
		if c, err := net.FileConn(f); err == nil {
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(scrape.ReadTimeout))
			in, out = c, c
		}
	}
	warn := func(w string) { fmt.Fprintf(a.Err, "bm2: warning: %s\n", w) }
	if sameFile(a.In, raw(a.Err)) {
		warn = func(w string) { journalWarning(ctx, "bm2 metrics: "+w) }
	}
	_, err := scrape.Answer(in, out, func() ([]byte, error) {
		text, warnings, err := a.exposition(ctx, names)
		for _, w := range warnings {
			warn(w)
		}
		return text, err
	})
	if err != nil {
		warn(err.Error())
	}
}

// journalWarning logs a warning to the journal, giving up after a
// second; tests replace it.
var journalWarning = func(ctx context.Context, msg string) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	journal.Send(ctx, msg, 4, nil) // LOG_WARNING
}

// raw is the writer under a termtext.Writer: an HTTP answer is bytes for
// a client (its CRLFs included), not text for a terminal.
func raw(w io.Writer) io.Writer {
	if tw, ok := w.(*termtext.Writer); ok {
		tw.Flush()
		return tw.W
	}
	return w
}

// sameFile tells whether r and w are one open file (one socket).
func sameFile(r io.Reader, w io.Writer) bool {
	rf, ok := r.(*os.File)
	wf, ok2 := w.(*os.File)
	if !ok || !ok2 {
		return false
	}
	ri, err := rf.Stat()
	wi, err2 := wf.Stat()
	return err == nil && err2 == nil && os.SameFile(ri, wi)
}

// metricsServe is `bm2 metrics --serve`: the scrape endpoint on the
// listening socket systemd passes (bm2-metrics.socket, Accept=no), until
// it has been idle for a while (package scrape). Warnings go to standard error, the
// service's journal.
func (a *App) metricsServe(ctx context.Context, names []string) error {
	ls, err := activation.Listeners()
	if err != nil {
		return fmt.Errorf("the sockets systemd passes: %w", err)
	}
	if len(ls) != 1 || ls[0] == nil {
		return fmt.Errorf("--serve needs exactly one listening stream socket from systemd (LISTEN_FDS), as bm2-metrics.socket passes it; got %d", len(ls))
	}
	warn := func(w string) { fmt.Fprintf(a.Err, "bm2: warning: %s\n", w) }
	s := scrape.New(func() ([]byte, error) {
		text, warnings, err := a.exposition(ctx, names)
		for _, w := range warnings {
			warn(w)
		}
		return text, err
	}, warn)
	return s.Serve(ctx, ls[0])
}
