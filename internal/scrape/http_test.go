package scrape

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/metrics"
)

// exchange runs Answer on a request and reads the answer back as a
// client would.
func exchange(t *testing.T, request string, expose func() ([]byte, error)) (*http.Response, []byte, error) {
	t.Helper()
	var out bytes.Buffer
	status, err := Answer(strings.NewReader(request), &out, expose)
	head := strings.HasPrefix(request, "HEAD ")
	resp, rerr := http.ReadResponse(bufio.NewReader(bytes.NewReader(out.Bytes())), &http.Request{Method: map[bool]string{true: "HEAD", false: "GET"}[head]})
	if rerr != nil {
		t.Fatalf("the answer is not HTTP: %v\n%q", rerr, out.String())
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Errorf("Answer says %d, sent %d", status, resp.StatusCode)
	}
	if !resp.Close || !strings.Contains(out.String(), "\r\nConnection: close\r\n") {
		t.Errorf("answer does not close the connection: %q", out.String())
	}
	if head && !strings.HasSuffix(out.String(), "\r\n\r\n") {
		t.Errorf("HEAD answer has a body: %q", out.String())
	}
	return resp, body, err
}

func TestAnswerHTTP(t *testing.T) {
	text := []byte("# HELP x y\n# TYPE x gauge\nx 1\n")
	calls := 0
	expose := func() ([]byte, error) { calls++; return text, nil }

	for _, req := range []string{
		"GET /metrics HTTP/1.1\r\nHost: h\r\nAccept: text/plain\r\n\r\n",
		"GET /metrics?name[]=x HTTP/1.0\r\n\r\n",
	} {
		resp, body, err := exchange(t, req, expose)
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, text) ||
			resp.Header.Get("Content-Type") != string(metrics.Format) || resp.ContentLength != int64(len(text)) {
			t.Errorf("%q: %d %v %q %v", req, resp.StatusCode, resp.Header, body, err)
		}
	}
	if metrics.Format != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("content type %q", metrics.Format)
	}
	resp, body, err := exchange(t, "HEAD /metrics HTTP/1.1\r\nHost: h\r\n\r\n", expose)
	if err != nil || resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(len(text)) {
		t.Errorf("HEAD: %d %v %q %v", resp.StatusCode, resp.Header, body, err)
	}
	if calls != 3 {
		t.Errorf("exposition made %d times for 3 requests of it", calls)
	}

	calls = 0
	for _, c := range []struct {
		req    string
		status int
		failed bool // the request is said to be wrong
	}{
		{"GET / HTTP/1.1\r\nHost: h\r\n\r\n", 404, false},
		{"GET /metrics/ HTTP/1.1\r\n\r\n", 404, false},
		{"HEAD /other HTTP/1.1\r\n\r\n", 404, false},
		{"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", 405, false},
		{"DELETE /metrics HTTP/1.1\r\n\r\n", 405, false},
		{"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400, true}, // a TLS hello
		{"GET /metrics\r\n\r\n", 400, true},                         // HTTP/0.9
		{"", 400, true},
		{"GET /metrics HTTP/1.1\r\nX: " + strings.Repeat("a", HeaderLimit) + "\r\n\r\n", 431, true},
		{"GET /metrics HTTP/1.1\r\n" + strings.Repeat("X-A: b\r\n", HeaderLimit/8) + "\r\n", 431, true},
		{"GET /metrics HTTP/2.0\r\n\r\n", 505, true},
	} {
		resp, body, err := exchange(t, c.req, expose)
		if resp.StatusCode != c.status || (err != nil) != c.failed {
			t.Errorf("%.40q: %d, %v; want %d", c.req, resp.StatusCode, err, c.status)
		}
		if c.status == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%.40q: Allow %q", c.req, resp.Header.Get("Allow"))
		}
		if !strings.HasPrefix(c.req, "HEAD") && !strings.HasPrefix(string(body), strconv.Itoa(c.status)+" ") {
			t.Errorf("%.40q: body %q", c.req, body)
		}
	}
	if calls != 0 {
		t.Errorf("exposition made for %d requests that were not for it", calls)
	}

	resp, body, err = exchange(t, "GET /metrics HTTP/1.1\r\n\r\n", func() ([]byte, error) {
		return nil, errors.New("metrics: a label is not UTF-8\nsecond line")
	})
	if resp.StatusCode != 500 || err == nil || string(body) != "metrics: a label is not UTF-8; second line\n" {
		t.Errorf("failed exposition: %d %q %v", resp.StatusCode, body, err)
	}
}

func TestAnswerHTTPOverAPipe(t *testing.T) {
	// Over a connection: the request is read up to its end, not to EOF
	// (the client waits for the answer), and a client that sends nothing
	// is left after the deadline.
	server, client := net.Pipe()
	done := make(chan int, 1)
	go func() {
		status, _ := Answer(server, server, func() ([]byte, error) { return []byte("x 1\n"), nil })
		server.Close()
		done <- status
	}()
	if _, err := io.WriteString(client, "GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "x 1\n" || <-done != 200 {
		t.Errorf("%d %q", resp.StatusCode, body)
	}

	server, client = net.Pipe()
	defer client.Close()
	server.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	go io.Copy(io.Discard, client)
	start := time.Now()
	if status, err := Answer(server, server, func() ([]byte, error) { return nil, nil }); status != 400 || err == nil {
		t.Errorf("silent client: %d %v", status, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("waited %v for a silent client", d)
	}
}
