package pm2load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/jsruntime"
	"github.com/bm2dev/bm2/pm2import"
)

// Options are how a file is read.
type Options struct {
	// Dirs is where node is looked for (the caller's PATH, then
	// systemd's search path, by default).
	Dirs []string
	// Timeout bounds the evaluation (DefaultTimeout when 0).
	Timeout time.Duration
}

// DefaultTimeout is how long an ecosystem file may take to load.
const DefaultTimeout = 10 * time.Second

// maxFile and maxOutput bound what is read: an ecosystem file is small.
const (
	maxFile   = 16 << 20
	maxOutput = 16 << 20
)

// Evaluated says how a JavaScript file was evaluated, for messages.
type Evaluated struct {
	Node    string // the node binary
	Version string // what it printed for --version
	As      string // the user it ran as
}

// Load reads file. For JavaScript, ev says how it was evaluated (nil for
// data). The source's Owner is the owner of the file that was read, from
// its file descriptor. Errors name the file and what went wrong.
func Load(ctx context.Context, file string, opts Options) (pm2import.Source, *Evaluated, error) {
	owner := -1
	src, ev, err := load(ctx, file, opts, &owner)
	if err == nil && owner >= 0 {
		src.Owner, src.OwnerKnown = owner, true
	}
	return src, ev, err
}

func load(ctx context.Context, file string, opts Options, owner *int) (pm2import.Source, *Evaluated, error) {
	given, err := filepath.Abs(file)
	if err != nil {
		return pm2import.Source{}, nil, err
	}
	abs, err := trustedPath(given)
	if err != nil {
		return pm2import.Source{}, nil, fmt.Errorf("read %s: %w", file, err)
	}
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return pm2import.Source{}, nil, fmt.Errorf("read %s: %w", file, errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return pm2import.Source{}, nil, fmt.Errorf("read %s: %w", file, err)
	}
	if !st.Mode().IsRegular() {
		return pm2import.Source{}, nil, fmt.Errorf("%s is not a regular file", file)
	}
	if err := ownedWithItsDir(abs, st); err != nil {
		return pm2import.Source{}, nil, fmt.Errorf("read %s: %w", file, err)
	}
	*owner = int(st.Sys().(*syscall.Stat_t).Uid)
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return pm2import.Source{}, nil, fmt.Errorf("read %s: %w", file, err)
	}
	if len(data) > maxFile {
		return pm2import.Source{}, nil, fmt.Errorf("%s is larger than %d MiB: not an ecosystem file", file, maxFile>>20)
	}
	ext := strings.ToLower(filepath.Ext(abs))
	switch ext {
	case ".js", ".cjs", ".mjs":
		return evaluate(ctx, abs, "module", st, opts)
	case ".json", ".yaml", ".yml", ".pm2":
	default:
		if !strings.HasPrefix(filepath.Base(abs), "dump.pm2") {
			// Anything else: a dump under another name is still JSON.
			if v, err := pm2import.DecodeJSON(data); err == nil && pm2import.IsDump(abs, v) {
				src, err := pm2import.FromValue(abs, v)
				return src, nil, err
			}
			return pm2import.Source{}, nil, fmt.Errorf("%s: not an ecosystem file PM2 reads (.js, .cjs, .mjs, .json, .yaml, .yml, a package.json with \"apps\") or a dump.pm2", file)
		}
	}
	src, err := pm2import.Parse(abs, data)
	var nj *pm2import.NotJSONError
	if errors.As(err, &nj) {
		// PM2 evaluates a .json as a JavaScript expression (comments,
		// unquoted keys): so does bm2 import, in the same confinement.
		return evaluate(ctx, abs, "json", st, opts)
	}
	return src, nil, err
}

// loader is the program node runs: argv is [mode, file]; the result goes
// to fd 3 as {"value": ...} or {"error": "..."}.
const loader = `'use strict';
const fs = require('node:fs');
const { pathToFileURL } = require('node:url');
const [mode, file] = process.argv.slice(1);
(async () => {
  let v;
  if (mode === 'json') {
    const vm = require('node:vm');
    v = vm.runInNewContext('(' + fs.readFileSync(file, 'utf8') + '\n)', Object.create(null), { filename: file, timeout: 2000 });
  } else {
    const ns = await import(pathToFileURL(file).href);
    v = 'default' in ns ? ns.default : ns;
  }
  if (typeof v === 'function') v = v();
  v = await v;
  const text = JSON.stringify(v, (k, x) => typeof x === 'bigint' ? String(x) : x);
  if (text === undefined) throw new Error('it exports ' + typeof v + ', not its apps');
  fs.writeSync(3, '{"value":' + text + '}');
})().then(() => process.exit(0), (e) => {
  let msg = String(e);
  if (e && typeof e === 'object' && e.message !== undefined) {
    const at = String(e.stack || '').split('\n').find((l) => l.includes(file));
    msg = (e.name || 'Error') + ': ' + e.message + (at ? ' (at ' + at.trim().replace(/^at /, '') + ')' : '');
  }
  if (e && e.code === 'ERR_ACCESS_DENIED') msg = 'ERR_ACCESS_DENIED: ' + msg;
  try { fs.writeSync(3, JSON.stringify({ error: msg })); } catch (_) {}
  process.exit(1);
});
`

// nobody is who a root-owned file is evaluated as.
const nobody = 65534

// evaluate runs the loader on file (see the package doc).
func evaluate(ctx context.Context, file, mode string, st os.FileInfo, opts Options) (pm2import.Source, *Evaluated, error) {
	sys := st.Sys().(*syscall.Stat_t)
	ev := &Evaluated{}
	var cred *syscall.Credential
	home := "/"
	if os.Geteuid() == 0 {
		uid, gid := int(sys.Uid), int(sys.Gid)
		ev.As = "uid " + strconv.Itoa(uid)
		if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			ev.As = u.Username
			if g, err := strconv.Atoi(u.Gid); err == nil {
				gid = g
			}
			if u.HomeDir != "" {
				home = u.HomeDir
			}
		}
		if uid == 0 {
			uid, gid, home, ev.As = nobody, nobody, "/", "nobody (the file is root's)"
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	} else {
		ev.As = "yourself"
		if u, err := user.Current(); err == nil {
			ev.As = u.Username
			home = u.HomeDir
		}
	}
	dirs := opts.Dirs
	if dirs == nil {
		dirs = append(filepath.SplitList(os.Getenv("PATH")), jsruntime.SearchPath()...)
	}
	var clean []string
	for _, d := range dirs {
		if filepath.IsAbs(d) {
			clean = append(clean, d)
		}
	}
	ask := jsruntime.AskVersion
	if cred != nil {
		ask = jsruntime.AsUser(int(cred.Uid), int(cred.Gid))
	}
	rc := jsruntime.Check(ctx, config.Node, "node", clean, ask)
	if !rc.OK() {
		return pm2import.Source{}, nil, fmt.Errorf("%s is JavaScript, and evaluating it needs Node.js 24 or newer on PATH: runtime %s", file, rc.Problem)
	}
	ev.Node, ev.Version = rc.Path, rc.Version

	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		return pm2import.Source{}, nil, err
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, rc.Path,
		"--permission", "--allow-fs-read=*", "--max-old-space-size=256", "--no-warnings",
		"--eval", loader, "--", mode, file)
	cmd.Dir = filepath.Dir(file)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "NO_COLOR=1"}
	cmd.Stdin = nil // /dev/null
	var stderr limited
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		w.Close()
		return pm2import.Source{}, nil, fmt.Errorf("evaluate %s: start %s as %s in %s: %w", file, rc.Path, ev.As, cmd.Dir, err)
	}
	w.Close()
	outc := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, maxOutput+1))
		outc <- b
	}()
	werr := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything it left in its group
	out := <-outc
	what := fmt.Sprintf("evaluate %s (node %s, as %s)", file, ev.Version, ev.As)
	if ctx.Err() == context.DeadlineExceeded {
		return pm2import.Source{}, nil, fmt.Errorf("%s: no result within %s: an ecosystem file must only describe its apps", what, timeout)
	}
	if len(out) > maxOutput {
		return pm2import.Source{}, nil, fmt.Errorf("%s: its apps make more than %d MiB of JSON", what, maxOutput>>20)
	}
	var res struct {
		Value json.RawMessage `json:"value"`
		Error *string         `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil || (res.Value == nil && res.Error == nil) {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" && werr != nil {
			msg = werr.Error()
		}
		return pm2import.Source{}, nil, fmt.Errorf("%s: it gave no apps: %s", what, firstLines(msg, 3))
	}
	if res.Error != nil {
		msg := *res.Error
		if rest, ok := strings.CutPrefix(msg, "ERR_ACCESS_DENIED: "); ok {
			return pm2import.Source{}, nil, fmt.Errorf("%s: it tried to write a file, start a process or load an addon, which bm2 import does not allow (an ecosystem file must only describe its apps): %s", what, firstLines(rest, 2))
		}
		return pm2import.Source{}, nil, fmt.Errorf("%s: %s", what, firstLines(msg, 3))
	}
	v, err := pm2import.DecodeJSON(res.Value)
	if err != nil {
		return pm2import.Source{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	src, err := pm2import.FromValue(file, v)
	return src, ev, err
}

// firstLines keeps the first n lines of a message (a stack trace's
// message and where it was thrown).
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

// limited keeps the first 64 KiB written to it.
type limited struct{ b bytes.Buffer }

func (l *limited) Write(p []byte) (int, error) {
	if room := 64<<10 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *limited) String() string { return l.b.String() }

// trustedPath resolves the symbolic links of an ecosystem file's path, as
// long as each one belongs to root: a link a user made (the file itself,
// or a directory on the way) could point root's read, or the evaluation,
// at another user's or root's own files. What comes back is the real path,
// used from then on, so a link swapped later changes nothing.
func trustedPath(path string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/")
	cur := "/"
	for _, part := range parts {
		next := filepath.Join(cur, part)
		st, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			if sys, ok := st.Sys().(*syscall.Stat_t); !ok || sys.Uid != 0 {
				return "", fmt.Errorf("%s is a symbolic link that root does not own: give the file's real path", next)
			}
			if next, err = filepath.EvalSymlinks(next); err != nil {
				return "", err
			}
		}
		cur = next
	}
	return cur, nil
}

// ownedWithItsDir requires that the file and every directory above it
// belong to root or to the file's owner, and that none of them lets
// anyone else write (a sticky directory excepted): then nobody but the
// owner can swap the file between this check and its evaluation as the
// owner, and what runs as the owner is the owner's own.
func ownedWithItsDir(path string, st os.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("cannot tell who owns it")
	}
	owner := sys.Uid
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		var ds syscall.Stat_t
		if err := syscall.Stat(dir, &ds); err != nil {
			return err
		}
		if ds.Uid != 0 && ds.Uid != owner {
			return fmt.Errorf("it belongs to uid %d but %s belongs to uid %d: run bm2 import on a file its directory's owner owns", owner, dir, ds.Uid)
		}
		if ds.Mode&0o022 != 0 && ds.Mode&syscall.S_ISVTX == 0 {
			return fmt.Errorf("%s may be written by other users (mode %o), so the file could be swapped", dir, ds.Mode&0o7777)
		}
		if dir == "/" {
			return nil
		}
	}
}
