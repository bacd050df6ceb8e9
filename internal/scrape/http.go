// Package scrape is the HTTP side of bm2's metrics endpoint: one
// HTTP/1.x exchange on a connection, within bounds on what a client
// sends and how long it takes (Answer, which `bm2 metrics --http` runs on
// the connection systemd hands over), and the server behind
// bm2-metrics.socket (Server, `bm2 metrics --serve`), which shares one
// exposition between the scrapes of a second and keeps held connections
// from delaying a scrape. What the exposition says is package metrics'.
package scrape

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/bm2dev/bm2/internal/metrics"
	"github.com/bm2dev/bm2/internal/wording"
)

// The bounds of one exchange (`bm2 metrics --http`, and each of --serve's) on what a client sends and how long
// it takes to send it and to read the answer: anyone who can connect to
// the socket is a client.
const (
	HeaderLimit  = 8 << 10
	ReadTimeout  = 2 * time.Second
	WriteTimeout = 10 * time.Second
)

// Answer reads one HTTP/1.x request from r and writes its answer to w:
// for GET or HEAD /metrics (any query), the exposition expose returns;
// 404 for any other path, 405 for any other method, 400 for what is not a
// request, 431 for a request line and headers longer than
// HeaderLimit. expose is called for a request for the exposition
// only. Every answer says Connection: close: there is one exchange per
// connection. It returns the status sent, and why the request was
// refused, the exposition failed or the answer could not be written.
func Answer(r io.Reader, w io.Writer, expose func() ([]byte, error)) (int, error) {
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
	lr := &io.LimitedReader{R: r, N: HeaderLimit}
	req, err := http.ReadRequest(bufio.NewReader(lr))
	if err != nil {
		if lr.N <= 0 {
			return http.StatusRequestHeaderFieldsTooLarge, nil, false,
				fmt.Errorf("HTTP request: request line and headers longer than %d bytes", HeaderLimit)
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
		d.SetWriteDeadline(time.Now().Add(WriteTimeout))
	}
	_, err := w.Write(b.Bytes())
	return err
}
