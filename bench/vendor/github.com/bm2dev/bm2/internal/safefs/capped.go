package safefs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge is what ReadAll's error wraps when there was more to read
// than it may.
var ErrTooLarge = errors.New("too large")

// ReadAll reads r to its end, but no more than max bytes: with more to
// read, it returns the first max and an error that wraps ErrTooLarge. It
// reads at most max+1 bytes from r, whatever r holds.
func ReadAll(r io.Reader, max int) ([]byte, error) {
	c := Capped{Max: max}
	_, err := io.Copy(&c, io.LimitReader(r, int64(max)+1))
	b := c.Bytes()
	if b == nil {
		b = []byte{} // as io.ReadAll: empty, not nil
	}
	if err == nil && c.Dropped() {
		err = fmt.Errorf("more than %d bytes: %w", max, ErrTooLarge)
	}
	return b, err
}

// A Capped keeps the first Max bytes written to it and drops the rest.
// Every Write succeeds, whole, so that what writes into it (a child's
// stdout or stderr) never fails nor blocks on a full pipe however much
// it says. The zero Capped keeps nothing; it is not safe for concurrent
// use.
type Capped struct {
	Max     int
	b       bytes.Buffer
	dropped bool
}

func (c *Capped) Write(p []byte) (int, error) {
	room := max(c.Max-c.b.Len(), 0)
	if len(p) > room {
		c.dropped = true
	}
	c.b.Write(p[:min(len(p), room)])
	return len(p), nil
}

// Bytes is what was kept; it is the Capped's until the next Write.
func (c *Capped) Bytes() []byte { return c.b.Bytes() }

// String is what was kept.
func (c *Capped) String() string { return c.b.String() }

// Dropped tells whether more was written than kept.
func (c *Capped) Dropped() bool { return c.dropped }
