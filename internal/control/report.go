package control

import "fmt"

// Reporter is where a command says what it does while it does it:
// package cli implements it on the user's streams. The words are
// control's (it knows what happened); where they go, their prefixes and
// their escaping are cli's, so that nothing in control writes to a
// stream and a caller other than the command line (a test, bm2 top's
// panes) takes the same reports.
type Reporter interface {
	// Did is one line of what the command did or does now: "starting
	// bm2-api.target", "api online: 2 instances …", "deleted api: …".
	Did(line string)
	// Progress is the wait's words as its step gives them: pieces of
	// lines, as an instance's line is written while it comes back
	// ("api-0 restarting… ", then "online, listening, confirmed
	// (1.2s)\n").
	Progress(text string)
	// Warn is a problem the command goes on despite.
	Warn(msg string)
	// Note is what the user may want to know of how the command goes
	// (a fork-mode reload leaves each port without a listener a while).
	Note(msg string)
	// Aside is a word beside the output: a wait for another command, an
	// interruption and what it left, a fix.
	Aside(msg string)
}

// discard is the Reporter of a Client that has none.
type discard struct{}

func (discard) Did(string)      {}
func (discard) Progress(string) {}
func (discard) Warn(string)     {}
func (discard) Note(string)     {}
func (discard) Aside(string)    {}

func (c *Client) reporter() Reporter {
	if c.Report == nil {
		return discard{}
	}
	return c.Report
}

func (c *Client) say(format string, args ...any) {
	c.reporter().Did(fmt.Sprintf(format, args...))
}

func (c *Client) progress(text string) { c.reporter().Progress(text) }

func (c *Client) warn(format string, args ...any) {
	c.reporter().Warn(fmt.Sprintf(format, args...))
}

func (c *Client) aside(format string, args ...any) {
	c.reporter().Aside(fmt.Sprintf(format, args...))
}
