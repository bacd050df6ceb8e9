package health

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// UserAgent is what a check says it is.
const UserAgent = "bm2-health/1"

// maxBody is how much of an answer's body a check reads before it closes
// the connection: the status is what counts.
const maxBody = 4 << 10

// Get checks one instance: GET http://127.0.0.1:port<path>, and
// http://[::1]:port<path> when nothing listens on 127.0.0.1 (an app
// bound to ::1 alone), within timeout for both. No proxy, no redirect
// followed (a 3xx passes as it is), no keep-alive, no compression. It is
// what the child running as the app's user does, once per instance.
func Get(ctx context.Context, port int, path string, timeout time.Duration) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	r := get(ctx, "127.0.0.1", port, path, timeout)
	if r.Failure == Refused {
		if r6 := get(ctx, "::1", port, path, timeout); r6.Failure != Refused {
			r = r6
		}
	}
	r.Latency = time.Since(start)
	return r
}

func get(ctx context.Context, host string, port int, path string, timeout time.Duration) Result {
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{}).DialContext,
		DisableKeepAlives:      true,
		DisableCompression:     true,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, strconv.Itoa(port))+path, nil)
	if err != nil {
		return Result{Failure: Failed}
	}
	req.Header.Set("User-Agent", UserAgent)
	resp, err := client.Do(req)
	if err != nil {
		return Result{Failure: classify(ctx, err)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return Result{Failure: Failed}
	}
	return Result{Status: resp.StatusCode}
}

// classify names why a check got no status.
func classify(ctx context.Context, err error) string {
	var ne net.Error
	switch {
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return Timeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return Reset
	}
	return Failed
}
