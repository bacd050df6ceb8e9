package journal

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestWebhookPostsJSON(t *testing.T) {
	got := make(chan Payload, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p Payload
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &p) != nil {
			t.Errorf("bad request %s %s %s", r.Method, r.Header.Get("Content-Type"), body)
		}
		got <- p
	}))
	defer srv.Close()
	w := Webhook{URL: srv.URL, MinLevel: "error"}
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	if err := w.Notify(context.Background(), Event{Kind: ReuseportConfirmed, Project: "api"}); err != nil {
		t.Fatal(err)
	}
	err := w.Notify(context.Background(), Event{Kind: ReuseportMissing, Project: "api", Instance: "api-0",
		Reason: "reuseport_missing", Time: at, Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	p := <-got
	want := Payload{Event: "reuseport_missing", Project: "api", Instance: "api-0", Reason: "reuseport_missing",
		Level: "error", Time: "2026-11-30T04:00:00.000Z", Message: "m"}
	if p != want {
		t.Errorf("payload %+v, want %+v", p, want)
	}
	select {
	case p := <-got:
		t.Errorf("info event sent below level error: %+v", p)
	default:
	}
}

// A webhook that accepts the connection and never answers costs Timeout.
func TestWebhookDeadEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := Webhook{URL: "http://" + l.Addr().String() + "/", MinLevel: "info", Timeout: 200 * time.Millisecond}
	start := time.Now()
	if err := w.Notify(context.Background(), Event{Kind: ReuseportMissing, Project: "api"}); err == nil {
		t.Fatal("dead webhook reported success")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("dead webhook took %v", d)
	}
}
