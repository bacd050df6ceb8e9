package units

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
)

// serialize is what File.Bytes renders, the way it was first written:
// the comments, then go-systemd's serializer.
func serialize(comments []string, sections []*unit.UnitSection) []byte {
	var b bytes.Buffer
	for _, c := range comments {
		b.WriteString("# " + c + "\n")
	}
	if len(comments) > 0 && len(sections) > 0 {
		b.WriteByte('\n')
	}
	io.Copy(&b, unit.SerializeSections(sections))
	return b.Bytes()
}

// File renders byte for byte what go-systemd's serializer does, for any
// mix of comments, sections (revisited out of order) and entries, and so
// does a File used before and Reset.
func TestFileMatchesSerializeSections(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	names := []string{"Unit", "Service", "Install", "Slice"}
	var reused File // Reset between rounds: renders as a new one would
	for round := range 2000 {
		var f File
		reused.Reset()
		var comments []string
		var sections []*unit.UnitSection
		for range rng.Intn(3) {
			c := fmt.Sprintf("comment %d", rng.Intn(100))
			f.Comment(c)
			reused.Comment(c)
			comments = append(comments, c)
		}
		for range rng.Intn(12) {
			name := names[rng.Intn(len(names))]
			key, value := fmt.Sprintf("K%d", rng.Intn(10)), fmt.Sprintf("v %d", rng.Intn(1000))
			if rng.Intn(8) == 0 {
				value = ""
			}
			f.Add(name, key, value)
			reused.Add(name, key, value)
			var s *unit.UnitSection
			for _, x := range sections {
				if x.Section == name {
					s = x
				}
			}
			if s == nil {
				s = &unit.UnitSection{Section: name}
				sections = append(sections, s)
			}
			s.Entries = append(s.Entries, &unit.UnitEntry{Name: key, Value: value})
		}
		got, want := f.Bytes(), serialize(comments, sections)
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("round %d:\n%q\nwant\n%q", round, got, want)
		}
		if again := reused.Bytes(); !bytes.Equal(again, want) {
			t.Fatalf("round %d, reused File:\n%q\nwant\n%q", round, again, want)
		}
		if cap(got) != len(got) {
			t.Fatalf("round %d: buffer of %d for %d bytes", round, cap(got), len(got))
		}
		// AppendTo: the same bytes after what the buffer holds, which it
		// leaves as it was.
		prefix := []byte(fmt.Sprintf("before %d\n", round))
		buf := append(make([]byte, 0, rng.Intn(64)), prefix...)
		if appended := f.AppendTo(buf); !bytes.Equal(appended, append(prefix, want...)) {
			t.Fatalf("round %d, AppendTo:\n%q\nwant\n%q", round, appended, append(prefix, want...))
		}
	}
}
