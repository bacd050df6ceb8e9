package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/buildinfo"
	"github.com/bm2dev/bm2/internal/metrics"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/journal"
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
	entries, found, err := a.selected(names)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	snap, figs := a.readSnapshotFigures(ctx, entries, func(w string) { warnings = append(warnings, w) })
	warnings = append(warnings, snapshotWarnings(snap)...)
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

// The bounds of `bm2 metrics --http` on what a client sends and how long
// it takes to send it and to read the answer: anyone who can connect to
// the socket is a client.
const (
	httpHeaderLimit  = 8 << 10
	httpReadTimeout  = 2 * time.Second
	httpWriteTimeout = 10 * time.Second
)

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
			c.SetReadDeadline(time.Now().Add(httpReadTimeout))
			in, out = c, c
		}
	}
	warn := func(w string) { fmt.Fprintf(a.Err, "bm2: warning: %s\n", w) }
	if sameFile(a.In, raw(a.Err)) {
		warn = func(w string) { journalWarning(ctx, "bm2 metrics: "+w) }
	}
	_, err := answerHTTP(in, out, func() ([]byte, error) {
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

// answerHTTP reads one HTTP/1.x request from r and writes its answer to w:
// for GET or HEAD /metrics (any query), the exposition expose returns;
// 404 for any other path, 405 for any other method, 400 for what is not a
// request, 431 for a request line and headers longer than
// httpHeaderLimit. expose is called for a request for the exposition
// only. Every answer says Connection: close: there is one exchange per
// connection. It returns the status sent, and why the request was
// refused, the exposition failed or the answer could not be written.
func answerHTTP(r io.Reader, w io.Writer, expose func() ([]byte, error)) (int, error) {
	status, body, head, why := route(r, expose)
	if err := reply(w, status, body, head); err != nil {
		return status, errors.Join(why, fmt.Errorf("HTTP answer: %w", err))
	}
	return status, why
}

// route reads the request and decides the answer: its status and body,
// whether it is to a HEAD request (no body sent), and why it is not the
// exposition.
func route(r io.Reader, expose func() ([]byte, error)) (status int, body []byte, head bool, why error) {
	lr := &io.LimitedReader{R: r, N: httpHeaderLimit}
	req, err := http.ReadRequest(bufio.NewReader(lr))
	if err != nil {
		if lr.N <= 0 {
			return http.StatusRequestHeaderFieldsTooLarge, nil, false,
				fmt.Errorf("HTTP request: request line and headers longer than %d bytes", httpHeaderLimit)
		}
		return http.StatusBadRequest, nil, false, fmt.Errorf("HTTP request: %w", err)
	}
	head = req.Method == http.MethodHead
	switch {
	case req.ProtoMajor != 1:
		return http.StatusHTTPVersionNotSupported, nil, head, fmt.Errorf("HTTP request: %s is not HTTP/1.x", req.Proto)
	case req.URL.Path != "/metrics":
		return http.StatusNotFound, nil, head, nil
	case req.Method != http.MethodGet && !head:
		return http.StatusMethodNotAllowed, nil, false, nil
	}
	text, err := expose()
	if err != nil {
		return http.StatusInternalServerError, []byte(wording.OneLine(err) + "\n"), head, err
	}
	return http.StatusOK, text, head, nil
}

// reply writes an answer. A body of nil is the status's text; the
// exposition (200) is in the text format, anything else plain text.
func reply(w io.Writer, status int, body []byte, head bool) error {
	ctype := "text/plain; charset=utf-8"
	switch {
	case status == http.StatusOK:
		ctype = string(metrics.Format)
	case body == nil:
		body = []byte(fmt.Sprintf("%d %s\n", status, http.StatusText(status)))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	fmt.Fprintf(&b, "Content-Type: %s\r\n", ctype)
	fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	if status == http.StatusMethodNotAllowed {
		b.WriteString("Allow: GET, HEAD\r\n")
	}
	b.WriteString("X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n")
	if !head {
		b.Write(body)
	}
	if d, ok := w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		d.SetWriteDeadline(time.Now().Add(httpWriteTimeout))
	}
	_, err := w.Write(b.Bytes())
	return err
}
