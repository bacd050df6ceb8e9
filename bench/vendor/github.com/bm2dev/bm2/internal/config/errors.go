package config

import (
	"errors"
	"fmt"
	"strings"
)

// Classes of problems in a project file. Every *Error wraps exactly one, so
// callers can test with errors.Is.
var (
	ErrSyntax     = errors.New("invalid TOML")
	ErrUnknownKey = errors.New("unknown key")
	ErrType       = errors.New("wrong type")
	ErrValue      = errors.New("invalid value")
	ErrMissing    = errors.New("required key missing")
	ErrConflict   = errors.New("port conflict")
)

// Error is one problem in one project file. It prints as
// "file:line: key: message", leaving out the parts it does not know.
type Error struct {
	File string // path of the project file
	Line int    // 1-based line of the key, 0 when unknown
	Key  string // dotted TOML key, "" for whole-file problems
	Msg  string // what is wrong, for a person
	Err  error  // one of the Err* classes above
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in one file, in line order. It is returned as
// an error only when it is not empty.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.Is and errors.As see every problem.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
