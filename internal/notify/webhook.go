package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/bm2dev/bm2/journal"
)

// Webhook posts events as JSON to a URL:
//
//	{"event":"reuseport_missing","project":"api","instance":"api-0",
//	 "reason":"reuseport_missing","level":"error","time":"2026-11-30T04:00:00.123Z",
//	 "host":"web1","message":"…","detail":"…"}
//
// Events below MinLevel are not sent. Each post gives up after Timeout.
// bm2's hooks and probe never post themselves: they spool the notification
// and bm2-notify.service posts it, with retries ([Deliverer]), so a dead
// webhook never delays a stop or a restart.
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

// Payload is the JSON body of a notification, documented in bm2.toml(5).
type Payload struct {
	Event    string `json:"event"`
	Project  string `json:"project"`
	Instance string `json:"instance,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Level    string `json:"level"`
	Time     string `json:"time"`
	Host     string `json:"host"`
	Message  string `json:"message"`
	Detail   string `json:"detail,omitempty"`
}

// NewPayload is the body of the notification for e, sent from host. An
// event without a time is stamped now.
func NewPayload(e journal.Event, host string) Payload {
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	return Payload{
		Event: string(e.Kind), Project: e.Project, Instance: e.Instance, Reason: string(e.Reason),
		Level: e.Kind.Level(), Time: t.UTC().Format("2006-01-02T15:04:05.000Z"), Host: host,
		Message: e.Message, Detail: e.Detail,
	}
}

// Reaches tells whether events of kind k are sent to a webhook whose
// lowest level is min (info, warning or error; "" is error, the default).
func Reaches(k journal.Kind, min string) bool {
	if min == "" {
		min = "error"
	}
	want, ok := levelRank[min]
	if !ok {
		want = levelRank["error"]
	}
	return levelRank[k.Level()] >= want
}

// PostError is a failed post.
type PostError struct {
	// Status is the HTTP status of an answer that was not 2xx; 0 when
	// there was no answer.
	Status int
	// BadURL: the URL cannot work as it is: it does not parse, is not
	// http or https, redirects to another place or names an address
	// that is refused (ErrTargetRefused).
	BadURL bool
	msg    string
}

func (e *PostError) Error() string { return e.msg }

// Permanent tells whether trying again cannot help: the URL is unusable,
// or the receiver refused the request itself (a 4xx other than 408 and
// 429). No answer (a timeout, a refused connection) or a 5xx may heal.
func (e *PostError) Permanent() bool {
	if e.BadURL {
		return true
	}
	return e.Status/100 == 4 && e.Status != http.StatusRequestTimeout && e.Status != http.StatusTooManyRequests
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

// ErrTargetRefused is a webhook address bm2-notify does not connect to
// (loopback and the host's own, link-local, multicast: see [Targets]);
// trying again cannot help.
var ErrTargetRefused = errors.New("refused to connect")

// Notify posts e unless its level is below MinLevel.
func (w Webhook) Notify(ctx context.Context, e journal.Event) error {
	if !Reaches(e.Kind, w.MinLevel) {
		return nil
	}
	return w.Post(ctx, NewPayload(e, ""))
}

// Post makes one attempt to deliver p, within Timeout. Its error is a
// *PostError, whose message shows the URL redacted.
func (w Webhook) Post(ctx context.Context, p Payload) error {
	shown := RedactURL(w.URL)
	body, err := json.Marshal(p)
	if err != nil {
		return &PostError{BadURL: true, msg: fmt.Sprintf("notify %s: %v", shown, err)}
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = DefaultWebhookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	target, err := url.Parse(w.URL)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return &PostError{BadURL: true, msg: fmt.Sprintf("notify %s: not an http:// or https:// URL", shown)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return &PostError{BadURL: true, msg: fmt.Sprintf("notify %s: cannot build the request", shown)}
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
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %v", timeout)
		}
		return &PostError{BadURL: errors.Is(err, errRedirect) || errors.Is(err, ErrTargetRefused), msg: fmt.Sprintf("notify %s: %v", shown, err)}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return &PostError{Status: resp.StatusCode, msg: fmt.Sprintf("notify %s: %s", shown, resp.Status)}
	}
	return nil
}
