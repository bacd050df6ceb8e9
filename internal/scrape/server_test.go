package scrape

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startScrapeServer serves s on a fresh loopback listener until the test
// ends; it returns the address and a channel closed when serve returns,
// with its result in *result.
func startScrapeServer(t *testing.T, s *Server) (addr string, done <-chan struct{}, result *error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	result = new(error)
	go func() { *result = s.Serve(ctx, l); close(ended) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Error("serve did not return 10 s after its context ended")
		}
	})
	return l.Addr().String(), ended, result
}

func scrape(t *testing.T, addr string) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// However many scrapes come at once, the exposition is computed once per
// cacheFor, and they all get it.
func TestScrapeServerComputesOncePerInterval(t *testing.T) {
	var calls atomic.Int32
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	s := &Server{
		cacheFor: time.Second, maxConns: 64, idle: time.Hour, warn: func(string) {},
		now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		expose: func() ([]byte, error) {
			n := calls.Add(1)
			time.Sleep(50 * time.Millisecond) // the others arrive meanwhile
			return []byte(fmt.Sprintf("bm2_build_info %d\n", n)), nil
		},
	}
	addr, _, _ := startScrapeServer(t, s)
	var wg sync.WaitGroup
	bodies := make([]string, 20)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := scrape(t, addr)
			if code != 200 {
				t.Errorf("scrape %d: %d", i, code)
			}
			bodies[i] = body
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("20 scrapes at once computed the exposition %d times, want 1", n)
	}
	for i, b := range bodies {
		if b != "bm2_build_info 1\n" {
			t.Errorf("scrape %d got %q", i, b)
		}
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if _, body := scrape(t, addr); body != "bm2_build_info 2\n" || calls.Load() != 2 {
		t.Errorf("a scrape a second later: %q, %d computations", body, calls.Load())
	}
}

// Connections held open without a request take no scrape's place: at
// the bound, the oldest of them is closed for the newcomer.
func TestScrapeServerHeldConnections(t *testing.T) {
	s := &Server{
		cacheFor: time.Second, maxConns: 8, idle: time.Hour, now: time.Now, warn: func(string) {},
		expose: func() ([]byte, error) { return []byte("bm2_build_info 1\n"), nil },
	}
	addr, _, _ := startScrapeServer(t, s)
	var held []net.Conn
	for range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// All 8 are admitted (none sent a byte) before the scrape comes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		n := s.conns.Len()
		s.mu.Unlock()
		if n == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections admitted, want 8", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := range 3 {
		if code, body := scrape(t, addr); code != 200 || body != "bm2_build_info 1\n" {
			t.Fatalf("scrape %d while 8 connections are held: %d %q", i, code, body)
		}
	}
	// The oldest held one was closed to make room for the first scrape.
	held[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := held[0].Read(make([]byte, 1)); err == nil {
		t.Error("the oldest held connection is still open")
	}
}

// A connection that is answered is not closed for a newcomer: the
// newcomer waits for a place.
func TestScrapeServerWaitsForAnswers(t *testing.T) {
	release := make(chan struct{})
	s := &Server{
		cacheFor: time.Second, maxConns: 1, idle: time.Hour, now: time.Now, warn: func(string) {},
		expose: func() ([]byte, error) { <-release; return []byte("x 1\n"), nil },
	}
	addr, _, _ := startScrapeServer(t, s)
	first := make(chan int, 1)
	go func() { code, _ := scrape(t, addr); first <- code }()
	// The first scrape is being answered (its request read).
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		answering := s.conns.Len() == 1 && s.conns.Front().Value.(*scrapeConn).answering
		s.mu.Unlock()
		if answering {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first scrape is not being answered")
		}
		time.Sleep(5 * time.Millisecond)
	}
	second := make(chan int, 1)
	go func() { code, _ := scrape(t, addr); second <- code }()
	select {
	case <-first:
		t.Fatal("the first scrape ended before its answer was released")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if code := <-first; code != 200 {
		t.Errorf("first scrape: %d", code)
	}
	if code := <-second; code != 200 {
		t.Errorf("second scrape: %d", code)
	}
}

// With no connection for idle, serve returns (systemd starts it again at
// the next one); while a connection is open it does not.
func TestScrapeServerExitsWhenIdle(t *testing.T) {
	s := &Server{
		cacheFor: time.Second, maxConns: 8, idle: 200 * time.Millisecond, now: time.Now, warn: func(string) {},
		expose: func() ([]byte, error) { return []byte("x 1\n"), nil },
	}
	addr, done, result := startScrapeServer(t, s)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// Held with a partial request for longer than idle: still serving.
	fmt.Fprint(c, "GET /metrics HTTP/1.1\r\n")
	select {
	case <-done:
		t.Fatalf("serve returned while a connection was open: %v", *result)
	case <-time.After(400 * time.Millisecond):
	}
	fmt.Fprint(c, "Host: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("answer: %v %v", resp, err)
	}
	c.Close()
	select {
	case <-done:
		if *result != nil {
			t.Errorf("serve: %v", *result)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return 10 s after its last connection")
	}
}
