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

	"github.com/bm2dev/bm2/atomicfile"
	"github.com/bm2dev/bm2/journal"
)

// Scope is where notifications wait and which units deliver them.
type Scope struct {
	Dir         string // the spool: root's (or the user's) alone, 0700
	PathUnit    string // watches Dir (DirectoryNotEmpty=)
	ServiceUnit string // delivers what is in Dir: `bm2-probe notify`
}

// System is the scope of the system's projects (/etc/bm2), whose hooks
// and probes run as root.
var System = Scope{
	Dir:         "/var/lib/bm2/notify",
	PathUnit:    "bm2-notify.path",
	ServiceUnit: "bm2-notify.service",
}

// User is the scope of a user's own projects (bm2's user scope): the
// spool under ~/.bm2/state, the units of the same names in the user's
// own manager (/usr/lib/systemd/user).
func User(stateDir string) Scope {
	return Scope{Dir: filepath.Join(stateDir, "notify"), PathUnit: System.PathUnit, ServiceUnit: System.ServiceUnit}
}

// MaxSpooled bounds the spool: a webhook that is down for long, under a
// crash loop at level info, must not fill the disk.
const MaxSpooled = 1000

// maxFileSize bounds what the deliverer reads from one spool file.
const maxFileSize = 64 << 10

// Notification is one spooled notification: where it goes and what.
type Notification struct {
	URL     string          `json:"url"`
	Payload journal.Payload `json:"payload"`
}

// Spool is a spool directory.
type Spool struct {
	Dir string
	// Max is the most files kept (MaxSpooled when 0).
	Max int
	// Owner is the UID the directory and every file in it must have
	// (0: root).
	Owner int
}

func (s Spool) max() int {
	if s.Max > 0 {
		return s.Max
	}
	return MaxSpooled
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

// Put writes n into the spool (atomically, 0600). When the spool is full
// it drops the oldest notifications first and says which on log.
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
	for len(names) >= s.max() {
		if err := os.Remove(filepath.Join(s.Dir, names[0])); err == nil || errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(log, "bm2: the notification spool %s holds %d notifications (the most it keeps): dropped the oldest, %s\n",
				s.Dir, len(names), names[0])
		}
		names = names[1:]
	}
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	// The name sorts by time: the oldest first.
	name := fmt.Sprintf("%023d-%s.json", now.UnixNano(), hex.EncodeToString(r[:]))
	if err := atomicfile.Write(filepath.Join(s.Dir, name), data, 0o600); err != nil {
		return "", err
	}
	return name, nil
}

// List returns the names of the spooled notifications, oldest first
// (atomicfile's temporary files, which start with a dot, are not).
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
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
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
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
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
