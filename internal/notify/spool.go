package notify

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/safefs"
)

// The units that deliver notifications, of the same names in the system
// manager and in a user's: PathUnit watches the scope's spool
// (layout.Layout.NotifyDir, DirectoryNotEmpty=), ServiceUnit delivers what
// is in it (`bm2-probe notify`).
const (
	PathUnit    = "bm2-notify.path"
	ServiceUnit = "bm2-notify.service"
)

// MaxPerProject bounds each project's share of the spool: a webhook that
// is down for long, under a crash loop at level info, must not fill the
// disk, nor push out another project's notifications.
const MaxPerProject = 100

// maxFileSize bounds what the deliverer reads from one spool file.
const maxFileSize = 64 << 10

// Notification is one spooled notification: where it goes and what.
type Notification struct {
	URL string `json:"url"`
	// AllowLocal lets the deliverer connect to this host itself (a
	// loopback address, or another of its own): the project's
	// notify.allow_local, from a file root wrote.
	AllowLocal bool    `json:"allow_local,omitempty"`
	Payload    Payload `json:"payload"`
}

// Spool is a spool directory.
type Spool struct {
	Dir string
	// Max is the most files kept of each project (MaxPerProject when 0).
	Max int
	// Owner is the UID the directory and every file in it must have
	// (0: root).
	Owner int
}

func (s Spool) max() int {
	if s.Max > 0 {
		return s.Max
	}
	return MaxPerProject
}

// dir makes sure the spool directory exists, is a directory (not a link)
// and is the owner's alone.
func (s Spool) dir() error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(s.Dir)
	if err != nil {
		return err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || st.Mode().Perm()&0o077 != 0 || sys == nil || int(sys.Uid) != s.Owner {
		return fmt.Errorf("the notification spool %s must be a directory of uid %d with mode 0700 (it is %v, uid %v): "+
			"remove it, `systemd-tmpfiles --create` makes it again", s.Dir, s.Owner, st.Mode(), uidOf(sys))
	}
	return nil
}

func uidOf(sys *syscall.Stat_t) any {
	if sys == nil {
		return "unknown"
	}
	return sys.Uid
}

// Put writes n into the spool (atomically, 0600). When its project's
// share is full it drops that project's oldest notifications first, and
// only those, and says which on log.
func (s Spool) Put(n Notification, now time.Time, log io.Writer) (string, error) {
	if err := s.dir(); err != nil {
		return "", err
	}
	data, err := json.Marshal(n)
	if err != nil {
		return "", err
	}
	names, err := s.List()
	if err != nil {
		return "", err
	}
	project := fileProject(n.Payload.Project)
	var own []string
	for _, name := range names {
		if ProjectOf(name) == project {
			own = append(own, name)
		}
	}
	for len(own) >= s.max() {
		if err := os.Remove(filepath.Join(s.Dir, own[0])); err == nil || errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(log, "bm2: the notification spool %s holds %d notifications of %s (the most it keeps of one project): dropped the oldest, %s\n",
				s.Dir, len(own), project, own[0])
		}
		own = own[1:]
	}
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	// The name sorts by time, the oldest first, and names the project.
	name := fmt.Sprintf("%023d-%s-%s.json", now.UnixNano(), project, hex.EncodeToString(r[:]))
	if err := safefs.Write(filepath.Join(s.Dir, name), data, 0o600); err != nil {
		return "", err
	}
	return name, nil
}

// fileProject is the project as a spool file names it: a project name
// ([a-z0-9_-]), or "_" for anything else.
func fileProject(p string) string {
	if p == "" || len(p) > 64 || strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return "_"
	}
	return p
}

// ProjectOf is the project a spool file belongs to, from its name
// (TIME-PROJECT-RANDOM.json); "" for a file of the older form
// (TIME-RANDOM.json), which are a share of their own.
func ProjectOf(name string) string {
	base := strings.TrimSuffix(name, ".json")
	i, j := strings.IndexByte(base, '-'), strings.LastIndexByte(base, '-')
	if i < 0 || i == j {
		return ""
	}
	return base[i+1 : j]
}

// List returns the names of the spooled notifications, oldest first
// (safefs.Write's temporary files, which start with a dot, are not).
func (s Spool) List() ([]string, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); !strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".json") && e.Type().IsRegular() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Read reads one spooled notification: a regular file of the spool's
// owner, never through a link, of at most 64 KiB.
func (s Spool) Read(name string) (Notification, error) {
	var n Notification
	path := filepath.Join(s.Dir, name)
	f, err := safefs.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return n, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return n, err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if !st.Mode().IsRegular() || sys == nil || int(sys.Uid) != s.Owner || st.Size() > maxFileSize {
		return n, fmt.Errorf("%s is not a notification bm2 wrote (a regular file of uid %d, at most %d bytes)", path, s.Owner, maxFileSize)
	}
	data, err := safefs.ReadAll(f, maxFileSize)
	if errors.Is(err, safefs.ErrTooLarge) {
		return n, fmt.Errorf("%s is not a notification bm2 wrote (it grew past %d bytes)", path, maxFileSize)
	}
	if err != nil {
		return n, err
	}
	if err := json.Unmarshal(data, &n); err != nil {
		return n, fmt.Errorf("%s: %v", path, err)
	}
	return n, nil
}

// Remove removes a spooled notification.
func (s Spool) Remove(name string) error {
	err := os.Remove(filepath.Join(s.Dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
