package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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

// Notify posts e unless its level is below MinLevel.
func (w Webhook) Notify(ctx context.Context, e Event) error {
	if levelRank[e.Kind.Level()] < levelRank[w.MinLevel] {
		return nil
	}
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	body, err := json.Marshal(Payload{
		Event: string(e.Kind), Project: e.Project, Instance: e.Instance, Reason: e.Reason,
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("notify %s: %w", w.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "bm2")
	client := w.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("notify %s: %w", w.URL, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notify %s: %s", w.URL, resp.Status)
	}
	return nil
}
