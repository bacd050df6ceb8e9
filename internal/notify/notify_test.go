package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/journaltest"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/journal"
)

func testSpool(t *testing.T) Spool {
	return Spool{Dir: filepath.Join(t.TempDir(), "notify"), Owner: os.Getuid()}
}

func note(url, event string) Notification {
	// The test receivers listen on loopback.
	return Notification{URL: url, AllowLocal: true, Payload: Payload{Event: event, Project: "api", Instance: "api-0", Level: "error",
		Time: "2026-11-30T04:00:00.000Z", Host: "web1", Message: "m"}}
}

func TestSpoolPutReadList(t *testing.T) {
	s := testSpool(t)
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	first, err := s.Put(note("https://h/x?token=secret", "instance_errored"), at, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Put(note("https://h/x", "runtime_rejected"), at.Add(-time.Hour), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// A temporary file of safefs.Write's, half written, is nobody's yet.
	if err := os.WriteFile(filepath.Join(s.Dir, ".#x.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	names, err := s.List()
	if err != nil || len(names) != 2 || names[0] != second || names[1] != first {
		t.Fatalf("List = %v, %v; want the older %s first, then %s", names, err, second, first)
	}
	st, _ := os.Stat(s.Dir)
	if st.Mode().Perm() != 0o700 {
		t.Errorf("spool directory mode %v, want 0700", st.Mode().Perm())
	}
	for _, n := range names {
		st, _ := os.Stat(filepath.Join(s.Dir, n))
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600: a webhook URL may carry a token", n, st.Mode().Perm())
		}
	}
	got, err := s.Read(first)
	if err != nil || got != note("https://h/x?token=secret", "instance_errored") {
		t.Errorf("Read = %+v, %v", got, err)
	}
	if err := s.Remove(first); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(first); err != nil {
		t.Errorf("removing a removed notification: %v", err)
	}
	if names, _ := s.List(); len(names) != 1 {
		t.Errorf("after Remove: %v", names)
	}
}

// What is not a regular file of the spool's owner is not read, and a
// spool directory others may enter is not written.
func TestSpoolRefuses(t *testing.T) {
	s := testSpool(t)
	if _, err := s.Put(note("https://h/x", "e"), time.Now(), io.Discard); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	data, _ := json.Marshal(note("https://evil/x", "e"))
	os.WriteFile(target, data, 0o600)
	os.Symlink(target, filepath.Join(s.Dir, "1-link.json"))
	if _, err := s.Read("1-link.json"); err == nil {
		t.Error("read a notification through a symbolic link")
	}
	other := s
	other.Owner = os.Getuid() + 1
	names, _ := s.List()
	if _, err := other.Read(names[0]); err == nil || !strings.Contains(err.Error(), "not a notification bm2 wrote") {
		t.Errorf("read a file of another uid: %v", err)
	}
	os.Chmod(s.Dir, 0o755)
	if _, err := s.Put(note("https://h/x", "e"), time.Now(), io.Discard); err == nil || !strings.Contains(err.Error(), s.Dir) {
		t.Errorf("wrote into a spool others may read: %v", err)
	}
}

func TestSpoolBounded(t *testing.T) {
	s := testSpool(t)
	s.Max = 3
	var log bytes.Buffer
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	var names []string
	for i := range 5 {
		n, err := s.Put(note("https://h/x", "e"), at.Add(time.Duration(i)*time.Second), &log)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	got, _ := s.List()
	if strings.Join(got, " ") != strings.Join(names[2:], " ") {
		t.Errorf("kept %v, want the 3 newest %v", got, names[2:])
	}
	if c := strings.Count(log.String(), "dropped the oldest"); c != 2 || !strings.Contains(log.String(), names[0]) {
		t.Errorf("log says %q, want the 2 drops named", log.String())
	}
}

// Every kind is spooled exactly when it reaches the project's level, and
// every event reaches the journal whatever the level.
func TestSinkLevels(t *testing.T) {
	levels := map[journal.Kind]string{
		journal.ReuseportConfirmed: "info", journal.ReuseportMissing: "error", journal.ReuseportProbeStopped: "warning",
		journal.InstanceCrashed: "warning", journal.InstanceErrored: "error", journal.RuntimeRejected: "error",
		journal.InstanceUnhealthy: "warning", journal.MemoryRestart: "warning", journal.SteeringUnavailable: "warning",
		journal.NotificationDropped: "never", // its own failure is not sent again
		journal.StateWriteFailed:    "warning",
	}
	if len(levels) != len(journal.Kinds()) {
		t.Fatalf("the test knows %d kinds, bm2 has %v", len(levels), journal.Kinds())
	}
	rank := map[string]int{"info": 0, "warning": 1, "error": 2}
	for _, min := range []config.Level{config.LevelInfo, config.LevelWarning, config.LevelError} {
		for _, k := range journal.Kinds() {
			s := testSpool(t)
			next := &journaltest.Recorder{}
			sink := Sink{Next: next, Spool: s, Host: func() (string, error) { return "web1", nil },
				Settings: func(project string) config.Notify {
					if project != "api" {
						t.Errorf("settings of %q asked", project)
					}
					return config.Notify{Webhook: "https://h/x", Level: min}
				}}
			at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
			ev := journal.Event{Kind: k, Project: "api", Instance: "api-0", Reason: "r", Message: "m", Detail: "d", Time: at}
			if err := sink.Emit(ev); err != nil {
				t.Fatal(err)
			}
			if len(next.Got) != 1 {
				t.Errorf("%s at level %s: %d events journaled, want 1", k, min, len(next.Got))
			}
			names, _ := s.List()
			want := levels[k] != "never" && rank[levels[k]] >= rank[string(min)]
			if (len(names) == 1) != want || len(names) > 1 {
				t.Errorf("%s (%s) at level %s: %d notifications spooled, want sent=%v", k, levels[k], min, len(names), want)
				continue
			}
			if !want {
				continue
			}
			n, err := s.Read(names[0])
			wantP := Payload{Event: string(k), Project: "api", Instance: "api-0", Reason: "r", Level: levels[k],
				Time: "2026-11-30T04:00:00.000Z", Host: "web1", Message: "m", Detail: "d"}
			if err != nil || n.URL != "https://h/x" || n.Payload != wantP {
				t.Errorf("%s: spooled %+v, %v; want %+v", k, n, err, wantP)
			}
		}
	}
}

// No webhook, an event of no project: nothing spooled; a spool that
// cannot be written fails nothing, and the line says so without the token,
// as does a state_write_failed event in the journal, which names the
// spool and the errno the kernel gave.
func TestSinkNothingOrBroken(t *testing.T) {
	s := testSpool(t)
	next := &journaltest.Recorder{}
	var log bytes.Buffer
	sink := Sink{Next: next, Spool: s, Log: &log, Settings: func(string) config.Notify { return config.Notify{Level: config.LevelInfo} }}
	sink.Emit(journal.Event{Kind: journal.InstanceErrored, Project: "api"})
	sink.Settings = func(string) config.Notify {
		return config.Notify{Webhook: "https://h/x?token=secret", Level: config.LevelInfo}
	}
	sink.Emit(journal.Event{Kind: journal.InstanceErrored})
	if names, _ := s.List(); len(names) != 0 {
		t.Errorf("spooled %v", names)
	}
	os.WriteFile(filepath.Join(filepath.Dir(s.Dir), "file"), nil, 0o600)
	sink.Spool.Dir = filepath.Join(filepath.Dir(s.Dir), "file", "notify")
	if err := sink.Emit(journal.Event{Kind: journal.InstanceErrored, Project: "api"}); err != nil {
		t.Errorf("a spool that cannot be written failed the emit: %v", err)
	}
	if len(next.Got) != 4 {
		t.Fatalf("%d events journaled, want 3 and a state_write_failed", len(next.Got))
	}
	if e := next.Got[2]; e.Kind != journal.InstanceErrored {
		t.Errorf("the event itself is %+v", e)
	}
	if e := next.Got[3]; e.Kind != journal.StateWriteFailed || e.Project != "api" || e.Path != sink.Spool.Dir || e.Errno != "ENOTDIR" ||
		!strings.Contains(e.Message, sink.Spool.Dir+" could not be written (ENOTDIR, not a directory)") ||
		!strings.Contains(e.Message, "the notification of instance_errored is not sent") || strings.Contains(e.Message+e.Detail, "secret") {
		t.Errorf("state_write_failed %+v", e)
	}
	if l := log.String(); !strings.Contains(l, "instance_errored of api not notified to https://h/x?REDACTED") || strings.Contains(l, "secret") {
		t.Errorf("log %q", l)
	}
}

// fast is the delivery policy of the tests: short backoffs, and an
// attempt's deadline long enough that a receiver that answers is never
// cut off on a loaded host (hanging shortens it where a receiver never
// answers, and the deadline passing is the point).
var fast = Policy{Timeout: 10 * time.Second, Backoff: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond},
	Concurrency: 8, Poll: 10 * time.Millisecond}

// A receiver that fails twice gets the notification on the third attempt;
// one that always fails gets 5 attempts, then the notification is dropped
// with a line that names it, the URL redacted; a 404 is not retried.
func TestDeliverRetries(t *testing.T) {
	for _, c := range []struct {
		name      string
		failures  int32
		status    int
		attempts  int32
		delivered int
		line      string
	}{
		{"fails twice", 2, 500, 3, 1, "notified instance_errored of api-0 (2026-11-30T04:00:00.000Z) to URL, attempt 3 of 5"},
		{"always fails", 100, 503, 5, 0, "gave up notifying instance_errored of api-0 (2026-11-30T04:00:00.000Z) to URL after 5 attempts: notify URL: 503 Service Unavailable; the notification is dropped"},
		{"refused", 100, 404, 1, 0, "gave up notifying instance_errored of api-0 (2026-11-30T04:00:00.000Z) to URL at attempt 1: notify URL: 404 Not Found; trying again cannot help"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			var bodies []Payload
			var mu sync.Mutex
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var p Payload
				if err := json.NewDecoder(r.Body).Decode(&p); err != nil || r.Header.Get("Content-Type") != "application/json" {
					t.Errorf("bad request: %v", err)
				}
				mu.Lock()
				bodies = append(bodies, p)
				mu.Unlock()
				if calls.Add(1) <= c.failures {
					w.WriteHeader(c.status)
				}
			}))
			defer srv.Close()
			s := testSpool(t)
			url := srv.URL + "/hook?token=secret"
			if _, err := s.Put(note(url, "instance_errored"), time.Now(), io.Discard); err != nil {
				t.Fatal(err)
			}
			var log testutil.SyncBuffer
			events := &journaltest.Recorder{}
			res, err := Deliverer{Spool: s, Policy: fast, Log: &log, Events: events}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// Given up: a notification_dropped event of the project and
			// instance, with the line as its message.
			if got := events.All(); c.delivered == 1 && len(got) != 0 {
				t.Errorf("events %+v for a delivered notification", got)
			} else if c.delivered == 0 && (len(got) != 1 || got[0].Kind != journal.NotificationDropped || got[0].Project != "api" ||
				got[0].Instance != "api-0" || !strings.Contains(got[0].Message, "gave up notifying") || strings.Contains(got[0].Message, "secret")) {
				t.Errorf("events %+v, want one notification_dropped of api-0", got)
			}
			if calls.Load() != c.attempts || res.Delivered != c.delivered || res.Delivered+res.Dropped != 1 {
				t.Errorf("%d attempts, result %+v; want %d attempts, %d delivered", calls.Load(), res, c.attempts, c.delivered)
			}
			for _, b := range bodies {
				if b != note(url, "").Payload && b.Event != "instance_errored" {
					t.Errorf("body %+v", b)
				}
			}
			if names, _ := s.List(); len(names) != 0 {
				t.Errorf("left in the spool: %v", names)
			}
			want := strings.ReplaceAll(c.line, "URL", srv.URL+"/hook?REDACTED")
			l := log.String()
			if got := events.All(); len(got) == 1 {
				l += got[0].Message // given up: said by the event
			}
			if !strings.Contains(l, want) || strings.Contains(l, "secret") {
				t.Errorf("log %q, want %q", l, want)
			}
		})
	}
}

// A receiver that accepts the connection and never answers delays no other
// notification: the one to a working receiver is delivered while the
// hanging one is still being tried, and Run returns once that one is
// given up.
func TestDeliverHangingReceiver(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	runDone := make(chan struct{})
	early := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-runDone:
			early <- false
		default:
			early <- true
		}
	}))
	defer srv.Close()
	s := testSpool(t)
	at := time.Now()
	// The hanging one first: the oldest.
	s.Put(note("http://"+l.Addr().String()+"/hang", "instance_errored"), at, io.Discard)
	s.Put(note(srv.URL+"/ok", "runtime_rejected"), at.Add(time.Millisecond), io.Discard)
	var log testutil.SyncBuffer
	hanging := fast
	hanging.Timeout = 300 * time.Millisecond
	res, err := Deliverer{Spool: s, Policy: hanging, Log: &log}.Run(context.Background())
	close(runDone)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-early:
		if !e {
			t.Error("the working receiver got its notification only after the hanging one was given up")
		}
	default:
		t.Error("the working receiver got nothing")
	}
	if res.Delivered != 1 || res.Dropped != 1 {
		t.Errorf("result %+v, want 1 delivered, 1 dropped", res)
	}
	mu.Lock()
	n := len(conns)
	mu.Unlock()
	if n != 5 {
		t.Errorf("the hanging receiver saw %d connections, want 5 attempts", n)
	}
	if !strings.Contains(log.String(), "after 5 attempts: notify http://"+l.Addr().String()+"/hang: no answer within 300ms") {
		t.Errorf("log %q", log.String())
	}
}

// Notifications spooled while a run is under way are delivered by it; a
// stopped run leaves the rest for the next one.
func TestDeliverLateAndStopped(t *testing.T) {
	s := testSpool(t)
	got := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p Payload
		json.NewDecoder(r.Body).Decode(&p)
		got <- p.Event
		if p.Event == "first" {
			// The second is spooled while the first is still being posted.
			s.Put(note(srvURL(r), "second"), time.Now(), io.Discard)
		}
	}))
	defer srv.Close()
	s.Put(note(srv.URL, "first"), time.Now(), io.Discard)
	res, err := Deliverer{Spool: s, Policy: fast}.Run(context.Background())
	if err != nil || res.Delivered != 2 {
		t.Fatalf("Run = %+v, %v; want 2 delivered", res, err)
	}
	if a, b := <-got, <-got; a != "first" || b != "second" {
		t.Errorf("delivered %s, %s", a, b)
	}

	ctx, cancel := context.WithCancel(context.Background())
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel()
		w.WriteHeader(503)
	}))
	defer down.Close()
	s.Put(note(down.URL, "kept"), time.Now(), io.Discard)
	res, err = Deliverer{Spool: s, Policy: fast}.Run(ctx)
	if err != nil || res.Delivered+res.Dropped != 0 {
		t.Errorf("stopped Run = %+v, %v", res, err)
	}
	if names, _ := s.List(); len(names) != 1 {
		t.Errorf("a stopped run left %v, want the undelivered notification", names)
	}
}

func srvURL(r *http.Request) string { return "http://" + r.Host + "/" }

func TestPostErrorPermanent(t *testing.T) {
	for status, want := range map[int]bool{400: true, 401: true, 404: true, 408: false, 429: false, 500: false, 503: false} {
		if got := (&PostError{Status: status}).Permanent(); got != want {
			t.Errorf("status %d permanent = %v", status, got)
		}
	}
	err := Webhook{URL: "ftp://h/x"}.Post(context.Background(), Payload{})
	var pe *PostError
	if !errors.As(err, &pe) || !pe.Permanent() {
		t.Errorf("ftp URL: %v", err)
	}
}
