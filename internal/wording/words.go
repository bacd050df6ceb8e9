package wording

import (
	"fmt"
	"strings"
	"time"
)

// Plural is "1 instance" or "3 instances".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// FormatUptime renders a duration the way bm2 list shows uptime: the two
// largest units, e.g. "45s", "3m12s", "2h5m", "3d4h".
func FormatUptime(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%dh", s/86400, s%86400/3600)
}

// OneLine renders an error on one line.
func OneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// JoinWords is "a", "a and b", "a, b and c".
func JoinWords(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	out := ws[0]
	for _, w := range ws[1 : len(ws)-1] {
		out += ", " + w
	}
	return out + " and " + ws[len(ws)-1]
}

// MsDuration is a count of milliseconds as a duration.
func MsDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
