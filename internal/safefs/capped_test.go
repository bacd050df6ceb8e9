package safefs

import (
	"errors"
	"strings"
	"testing"
)

func TestReadAll(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
		over bool
	}{
		{"", 4, "", false},
		{"abcd", 4, "abcd", false},
		{"abcde", 4, "abcd", true},
		{strings.Repeat("x", 100<<10), 64 << 10, strings.Repeat("x", 64<<10), true},
	} {
		r := strings.NewReader(c.in)
		got, err := ReadAll(r, c.max)
		if string(got) != c.want || errors.Is(err, ErrTooLarge) != c.over || (err != nil) != c.over || got == nil {
			t.Errorf("ReadAll(%d bytes, %d) = %d bytes, %v", len(c.in), c.max, len(got), err)
		}
		if read := int64(len(c.in)) - int64(r.Len()); read > int64(c.max)+1 {
			t.Errorf("read %d bytes for a cap of %d", read, c.max)
		}
	}
}

func TestCapped(t *testing.T) {
	c := Capped{Max: 5}
	for _, p := range []string{"abc", "def", "ghi"} {
		if n, err := c.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if c.String() != "abcde" || !c.Dropped() {
		t.Fatalf("%q %v", c.String(), c.Dropped())
	}
	var d Capped
	d.Max = 3
	d.Write([]byte("abc"))
	if d.String() != "abc" || d.Dropped() {
		t.Fatalf("%q %v", d.String(), d.Dropped())
	}
}
