package testutil

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// FirstDifference names the first line where want and got part.
func FirstDifference(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, w, g)
		}
	}
	return "(no line differs)"
}

// ManSection checks that the lines of page between the lines begin and
// end are content; with update it rewrites them instead. It reports
// whether they were (or now are) content, and fails the test when the page
// lacks the markers.
func ManSection(t *testing.T, page, begin, end, content string, update bool) bool {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i, j := strings.Index(text, begin+"\n"), strings.Index(text, end+"\n")
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q", page, begin, end)
	}
	want := begin + "\n" + content + end + "\n"
	if text[i:j+len(end)+1] == want {
		return true
	}
	if !update {
		return false
	}
	text = text[:i] + want + text[j+len(end)+1:]
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return true
}

// SyncBuffer is a bytes.Buffer a test may read while a command writes it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
