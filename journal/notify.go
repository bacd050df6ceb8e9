package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Webhook posts events as JSON to a URL:
//
//	{"event":"reuseport_missing","project":"api","instance":"api-0",
//	 "reason":"reuseport_missing","level":"error","time":"2026-11-30T04:00:00.123Z",
//	 "message":"…","detail":"…"}
//
// Events below MinLevel are not sent. Each post gives up after Timeout, so a
// dead webhook costs at most that long and never blocks bm2's own work.
// A redirect is followed only to the same scheme and host: a webhook URL
// often carries a token, and a redirect must not carry the request (or the
// token in it) elsewhere. The URL is never printed as it is: see
// [RedactURL].
type Webhook struct {
	URL      string
	MinLevel string // info, warning or error
	Timeout  time.Duration
	Client   *http.Client
}

// DefaultWebhookTimeout bounds one notification.
const DefaultWebhookTimeout = 3 * time.Second

var levelRank = map[string]int{"info": 0, "warning": 1, "error": 2}

// Payload is the JSON body of a notification.
type Payload struct {
	Event    string `json:"event"`
	Project  string `json:"project"`
	Instance string `json:"instance,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Level    string `json:"level"`
	Time     string `json:"time"`
	Message  string `json:"message"`
	Detail   string `json:"detail,omitempty"`
}

// RedactURL is a webhook URL fit to print: without user info and with the
// query replaced by "REDACTED", the two places webhook URLs carry
// credentials. What is not a URL at all is not printed either.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(a URL that does not parse)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "REDACTED"
	}
	u.ForceQuery = false
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// errRedirect refuses a redirect to another place.
var errRedirect = errors.New("redirect to another host not followed")

// Notify posts e unless its level is below MinLevel.
func (w Webhook) Notify(ctx context.Context, e Event) error {
	if levelRank[e.Kind.Level()] < levelRank[w.MinLevel] {
		return nil
	}
	shown := RedactURL(w.URL)
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	body, err := json.Marshal(Payload{
		Event: string(e.Kind), Project: e.Project, Instance: e.Instance, Reason: string(e.Reason),
		Level: e.Kind.Level(), Time: t.UTC().Format("2006-01-02T15:04:05.000Z"),
		Message: e.Message, Detail: e.Detail,
	})
	if err != nil {
		return err
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = DefaultWebhookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	target, err := url.Parse(w.URL)
	if err != nil {
		return fmt.Errorf("notify %s: the URL does not parse", shown)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("notify %s: cannot build the request", shown)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "bm2")
	client := http.Client{Transport: http.DefaultTransport}
	if w.Client != nil {
		client = *w.Client
	}
	client.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if r.URL.Scheme != target.Scheme || r.URL.Host != target.Host || len(via) >= 5 {
			return errRedirect
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		// *url.Error prints the URL: print only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("notify %s: %v", shown, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notify %s: %s", shown, resp.Status)
	}
	return nil
}
