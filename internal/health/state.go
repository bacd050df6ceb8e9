package health

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/units"
)

// Status is where one run of an instance stands.
type Status string

const (
	// Starting: the run has not answered healthy yet and is younger
	// than StartGrace; its failures do not count.
	Starting Status = "starting"
	// Healthy: the last check passed.
	Healthy Status = "healthy"
	// Unhealthy: the last counted check failed; Failures of Limit.
	Unhealthy Status = "unhealthy"
)

// Entry is one running instance in the state file.
type Entry struct {
	// Instance is "api-0" (or "api-surge"); Invocation the run's
	// InvocationID: a new run is a new entry.
	Instance   string `json:"instance"`
	Invocation string `json:"invocation"`
	Status     Status `json:"status"`
	// Failures is how many counted checks in a row failed; Limit is
	// health_failures, at which the instance is restarted.
	Failures int `json:"failures"`
	Limit    int `json:"limit"`
	// Last is the last check's result ("200", "timeout"), LatencyMS how
	// long it took.
	Last      string `json:"last"`
	LatencyMS int64  `json:"latency_ms"`
	// Checked is when the last check started; Answered when the
	// instance last answered with a status (any), Healthy with a
	// healthy one, in this run; Counted when the last counted failure's
	// check started; Restarted when this run was restarted for
	// reaching Limit.
	Checked time.Time `json:"checked"`
	// First is when the run was first checked: where its start grace
	// begins when systemd gave no ActiveEnterTimestamp.
	First     time.Time `json:"first,omitzero"`
	Answered  time.Time `json:"answered,omitzero"`
	Healthy   time.Time `json:"healthy,omitzero"`
	Counted   time.Time `json:"counted,omitzero"`
	Restarted time.Time `json:"restarted,omitzero"`
}

// StateVersion is the version of the state file's format.
const StateVersion = 1

// State is the state file: every running instance of one project, as the
// last run of its health service left them.
type State struct {
	Version   int     `json:"version"`
	Project   string  `json:"project"`
	Instances []Entry `json:"instances"`
}

// Of returns instance's entry for run invocation: none when the file
// has no entry for it, or one of another run (not checked yet).
func (s State) Of(instance, invocation string) (Entry, bool) {
	for _, e := range s.Instances {
		if e.Instance == instance {
			return e, e.Invocation == invocation && invocation != ""
		}
	}
	return Entry{}, false
}

// StateFile is the name of the state file in the health directory
// (layout.Layout.HealthDir).
const StateFile = "state"

// Path is the state file in the project's health directory dir.
func Path(dir string) string { return filepath.Join(dir, StateFile) }

// MaxStateSize is the most Read reads: 1024 instances and a surge,
// a few hundred bytes each.
const MaxStateSize = 1 << 20

// Encode is the state file's content.
func Encode(s State) []byte {
	s.Version = StateVersion
	if s.Instances == nil {
		s.Instances = []Entry{}
	}
	data, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return append(data, '\n')
}

// Decode reads Encode's form back. An unknown field or another version
// is an error: the file is written by this bm2 alone.
func Decode(data []byte) (State, error) {
	var s State
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return State{}, err
	}
	if s.Version != StateVersion {
		return State{}, fmt.Errorf("version %d, not %d", s.Version, StateVersion)
	}
	// In user scope the file is the user's, and so the app's, to write:
	// what bm2 list shows of it is bm2's words and numbers, or nothing.
	for _, e := range s.Instances {
		if err := e.valid(s.Project); err != nil {
			return State{}, fmt.Errorf("instance %q: %w", e.Instance, err)
		}
	}
	return s, nil
}

// valid checks that e says what a health service of project could have
// written: an instance of the project, an InvocationID (letters and
// digits), one of the
// status words, a result as the child prints it, counts in range.
func (e Entry) valid(project string) error {
	switch {
	case !validInstance(project, e.Instance):
		return errors.New("not an instance of the project")
	case len(e.Invocation) > 64 || strings.Trim(e.Invocation, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "":
		return errors.New("not an InvocationID")
	case e.Status != Starting && e.Status != Healthy && e.Status != Unhealthy:
		return fmt.Errorf("status %q", e.Status)
	case !validResult(e.Last):
		return fmt.Errorf("result %q", e.Last)
	case e.Failures < 0 || e.Limit < 0 || e.Failures > 1000 || e.Limit > 1000 || e.LatencyMS < 0:
		return errors.New("counts out of range")
	}
	return nil
}

// validInstance tells "api-0" and "api-surge" of project api.
func validInstance(project, instance string) bool {
	rest, ok := strings.CutPrefix(instance, project+"-")
	if !ok || project == "" {
		return false
	}
	if rest == units.SurgeName {
		return true
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n >= 0 && strconv.Itoa(n) == rest
}

// validResult tells a check's result as Result.String writes it, or ""
// (none yet).
func validResult(r string) bool {
	switch r {
	case "", Timeout, Refused, Reset, Failed:
		return true
	}
	n, err := strconv.Atoi(r)
	return err == nil && n >= 100 && n <= 599 && strconv.Itoa(n) == r
}

// Read reads the state file at path (never through a symbolic link, at
// most MaxStateSize). A file that is not there yet is an error that
// wraps fs.ErrNotExist.
func Read(path string) (State, error) {
	f, err := safefs.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return State{}, err
	}
	defer f.Close()
	data, err := safefs.ReadAll(f, MaxStateSize)
	if err != nil {
		return State{}, fmt.Errorf("read %s: %w", path, err)
	}
	s, err := Decode(data)
	if err != nil {
		return State{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Write replaces the state file at path (atomically, 0644: bm2 list reads
// it as any user).
func Write(path string, s State) error {
	return safefs.Write(path, Encode(s), 0o644)
}

// IsMissing tells whether a Read error is only that there is no file
// yet: no check has run since boot (or since the project got its check).
func IsMissing(err error) bool { return errors.Is(err, fs.ErrNotExist) }
