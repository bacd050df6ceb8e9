package notify

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/journal"
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
	if err := w.Notify(context.Background(), journal.Event{Kind: journal.ReuseportConfirmed, Project: "api"}); err != nil {
		t.Fatal(err)
	}
	err := w.Notify(context.Background(), journal.Event{Kind: journal.ReuseportMissing, Project: "api", Instance: "api-0",
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
	// Without its Timeout the call would never return: the test's own
	// deadline is the bound, not a timed assertion.
	err = w.Notify(context.Background(), journal.Event{Kind: journal.ReuseportMissing, Project: "api"})
	if err == nil || !strings.Contains(err.Error(), "200ms") {
		t.Fatalf("dead webhook: %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pass@hooks.example.com/h?token=abc#x": "https://hooks.example.com/h?REDACTED",
		"http://127.0.0.1:9000/hook":                        "http://127.0.0.1:9000/hook",
		"https://hooks.example.com/h?":                      "https://hooks.example.com/h",
		"://nope":                                           "(a URL that does not parse)",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// Credentials in the URL never show in an error, and a redirect to another
// host is not followed (the request, and the token, stay where they were
// sent); a redirect on the same host is.
func TestWebhookRedirectsAndRedaction(t *testing.T) {
	hits := make(chan string, 4)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- "other " + r.URL.String()
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/stolen?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/here?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
		case "/here":
			hits <- "same " + r.URL.Path
		default:
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	secret := "s3cr3t"
	ev := journal.Event{Kind: journal.ReuseportMissing, Project: "api"}

	away := "http://bob:" + secret + "@" + u.Host + "/away?token=" + secret
	err := Webhook{URL: away, MinLevel: "error"}.Notify(context.Background(), ev)
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "not followed") {
		t.Fatalf("redirect away: %v", err)
	}
	if err := (Webhook{URL: srv.URL + "/moved?token=" + secret, MinLevel: "error"}).Notify(context.Background(), ev); err != nil {
		t.Fatalf("same-host redirect: %v", err)
	}
	if err := (Webhook{URL: srv.URL + "/denied?token=" + secret, MinLevel: "error"}).Notify(context.Background(), ev); err == nil ||
		strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "403") {
		t.Fatalf("refused: %v", err)
	}
	close(hits)
	var got []string
	for h := range hits {
		got = append(got, h)
	}
	if len(got) != 1 || got[0] != "same /here" {
		t.Fatalf("requests seen: %q", got)
	}
}
