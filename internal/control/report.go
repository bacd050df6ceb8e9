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

// reporterOf is r, or a Reporter that drops everything when there is
// none.
func reporterOf(r Reporter) Reporter {
	if r == nil {
		return discard{}
	}
	return r
}

// say is one line of what the command did (Reporter.Did).
func say(r Reporter, format string, args ...any) {
	reporterOf(r).Did(fmt.Sprintf(format, args...))
}

// progress is the wait's words (Reporter.Progress).
func progress(r Reporter, text string) { reporterOf(r).Progress(text) }

// warn is a problem the command goes on despite (Reporter.Warn).
func warn(r Reporter, format string, args ...any) {
	reporterOf(r).Warn(fmt.Sprintf(format, args...))
}

// aside is a word beside the output (Reporter.Aside).
func aside(r Reporter, format string, args ...any) {
	reporterOf(r).Aside(fmt.Sprintf(format, args...))
}

// warner is warn bound to r, for a callee that takes a printf-like
// warning function.
func warner(r Reporter) func(format string, args ...any) {
	return func(format string, args ...any) { warn(r, format, args...) }
}
