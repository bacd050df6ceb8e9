package notify

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/journaltest"
	"github.com/bm2dev/bm2/internal/testutil"
)

// fakeHTTP is a webhook receiver per host, without a network: "dead"
// never answers (until the attempt is given up), "down" answers 503 at
// once, anything else 200.
type fakeHTTP struct {
	mu       sync.Mutex
	attempts map[string]int // per host
	changed  chan struct{}
}

func newFakeHTTP() *fakeHTTP {
	return &fakeHTTP{attempts: map[string]int{}, changed: make(chan struct{}, 1000)}
}

func (f *fakeHTTP) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.attempts[r.URL.Host]++
	f.mu.Unlock()
	f.changed <- struct{}{}
	switch r.URL.Host {
	case "dead":
		<-r.Context().Done()
		return nil, r.Context().Err()
	case "down":
		return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

func (f *fakeHTTP) count(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts[host]
}

// waitFor waits until cond holds, re-checked on every request and
// every few milliseconds; a real deadline only bounds a test that failed.
func (f *fakeHTTP) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-f.changed:
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: never happened (attempts %v)", what, f.snapshot())
		}
	}
}

func (f *fakeHTTP) snapshot() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := map[string]int{}
	for k, v := range f.attempts {
		m[k] = v
	}
	return m
}

func projectNote(project, host string, i int) Notification {
	return Notification{URL: "http://" + host + "/hook", Payload: Payload{Event: "instance_crashed",
		Project: project, Instance: fmt.Sprintf("%s-%d", project, i), Level: "warning", Time: "2026-11-30T04:00:00.000Z"}}
}

// Project a's webhook never answers and a has many notifications, older
// than b's: b's are each delivered at their first attempt while a's
// first attempts are still hanging, and a holds no more than its own
// slots meanwhile.
func TestDeliverDeadWebhookDelaysNoOtherProject(t *testing.T) {
	s := testSpool(t)
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	for i := range 50 {
		if _, err := s.Put(projectNote("a", "dead", i), at.Add(time.Duration(i)*time.Millisecond), io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		s.Put(projectNote("b", "b.example", i), at.Add(time.Second+time.Duration(i)*time.Millisecond), io.Discard)
	}
	f := newFakeHTTP()
	// An attempt never ends by itself, and the clock of the waits between
	// attempts never moves: all a's notifications could do is wait.
	p := Policy{Timeout: time.Hour, Backoff: fast.Backoff, Concurrency: 2, Poll: 10 * time.Millisecond}
	never := func(time.Duration) <-chan time.Time { return nil }
	ctx, cancel := context.WithCancel(context.Background())
	var log testutil.SyncBuffer
	type ran struct {
		res Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := Deliverer{Spool: s, Policy: p, Client: &http.Client{Transport: f}, Log: &log, After: never}.Run(ctx)
		done <- ran{res, err}
	}()
	onlyA := func() bool {
		names, _ := s.List()
		for _, n := range names {
			if ProjectOf(n) != "a" {
				return false
			}
		}
		return len(names) == 50
	}
	f.waitFor(t, "b's 3 notifications delivered and removed", func() bool {
		return strings.Count(log.String(), "to http://b.example/hook, attempt 1 of 5") == 3 && onlyA()
	})
	if n := f.count("b.example"); n != 3 {
		t.Errorf("b's receiver saw %d attempts, want 3: one each", n)
	}
	if n := f.count("dead"); n > 2 {
		t.Errorf("a's dead receiver has %d attempts under way, more than a's 2 slots", n)
	}
	cancel()
	r := <-done
	if r.err != nil || r.res.Dropped != 0 {
		t.Errorf("Run = %+v, %v; want nothing dropped, a's left for the next run", r.res, r.err)
	}
	if names, _ := s.List(); len(names) != 50 {
		t.Errorf("a stopped run left %d notifications, want a's 50", len(names))
	}
}

// A notification waiting to be tried again holds no slot: with one slot
// and a receiver that fails at once, each of the project's notifications
// gets its first attempt while the others wait (the clock never moves).
func TestDeliverBackoffHoldsNoSlot(t *testing.T) {
	s := testSpool(t)
	at := time.Now()
	for i := range 3 {
		s.Put(projectNote("a", "down", i), at.Add(time.Duration(i)*time.Millisecond), io.Discard)
	}
	f := newFakeHTTP()
	var mu sync.Mutex
	var waits []chan time.Time
	after := func(time.Duration) <-chan time.Time {
		c := make(chan time.Time, 1)
		mu.Lock()
		waits = append(waits, c)
		mu.Unlock()
		return c
	}
	p := Policy{Timeout: time.Hour, Backoff: []time.Duration{time.Hour}, Concurrency: 1, Poll: 10 * time.Millisecond}
	events := &journaltest.Recorder{}
	done := make(chan Result, 1)
	go func() {
		res, _ := Deliverer{Spool: s, Policy: p, Client: &http.Client{Transport: f}, Events: events, After: after}.Run(context.Background())
		done <- res
	}()
	// All three made their first attempt and wait for the clock at once.
	f.waitFor(t, "3 first attempts with one slot, all 3 waiting", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return f.count("down") == 3 && len(waits) == 3
	})
	// Then the clock moves: each is tried its second and last time.
	mu.Lock()
	for _, c := range waits {
		c <- time.Time{}
	}
	mu.Unlock()
	if res := <-done; res.Dropped != 3 || f.count("down") != 6 {
		t.Errorf("Run = %+v after %d attempts, want 3 dropped after 6", res, f.count("down"))
	}
}

// Each project has its own share of the spool: a project that overflows
// drops its own oldest notifications, never another project's (nor the
// files of the older name form, a share of their own).
func TestSpoolSharePerProject(t *testing.T) {
	s := testSpool(t)
	s.Max = 4
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	var bs, as []string
	for i := range 4 {
		n, err := s.Put(projectNote("b", "b.example", i), at.Add(time.Duration(i)*time.Second), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if ProjectOf(n) != "b" {
			t.Fatalf("%s: project %q, want b", n, ProjectOf(n))
		}
		bs = append(bs, n)
	}
	legacy := "00001764475200000000000-3f2a9c1e.json" // before the project was in the name
	data := `{"url":"http://x/","payload":{"event":"e","project":"old"}}`
	if err := writeFile(s, legacy, data); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := range 30 {
		n, err := s.Put(projectNote("a", "dead", i), at.Add(time.Minute+time.Duration(i)*time.Second), &log)
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, n)
	}
	got, _ := s.List()
	want := append(append([]string{legacy}, bs...), as[26:]...)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("spool holds\n%v\nwant b's 4, the old file and a's 4 newest\n%v", got, want)
	}
	if c := strings.Count(log.String(), "notifications of a (the most it keeps of one project): dropped the oldest"); c != 26 {
		t.Errorf("%d drops said, want 26:\n%s", c, log.String())
	}
	if ProjectOf(legacy) != "" || ProjectOf("1-my-app-00ff.json") != "my-app" {
		t.Errorf("ProjectOf: %q, %q", ProjectOf(legacy), ProjectOf("1-my-app-00ff.json"))
	}
}

func writeFile(s Spool, name, data string) error {
	return os.WriteFile(filepath.Join(s.Dir, name), []byte(data), 0o600)
}
