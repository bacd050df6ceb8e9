package ecosystem

import (
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

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/pm2/convert"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/internal/trust"
)

// Options are how a file is read.
type Options struct {
	// Dirs is where node is looked for (the caller's PATH, then
	// systemd's search path, by default).
	Dirs []string
	// Timeout bounds the evaluation (DefaultTimeout when 0).
	Timeout time.Duration
	// Read reads the file once and says who could have written it
	// (trust.Read with the system's accounts by default).
	Read func(path string) (trust.File, error)
}

// DefaultTimeout is how long an ecosystem file may take to load.
const DefaultTimeout = 10 * time.Second

// maxOutput bounds what an evaluation may give back; what is read is
// bounded by trust.MaxFile.
const maxOutput = 16 << 20

// Evaluated says how a JavaScript file was evaluated, for messages.
type Evaluated struct {
	Node    string // the node binary
	Version string // what it printed for --version
	As      string // the user it ran as
}

// Load reads file, once, through trust.Read: the source's Owner is the
// file's owner and its Speaker who could have written what was read.
// For JavaScript, ev says how it was evaluated (nil for data); what is
// evaluated is the bytes read, never the file read again. A file
// reached through a symbolic link a user owns is refused. Errors name
// the file and what went wrong.
func Load(ctx context.Context, file string, opts Options) (convert.Source, *Evaluated, error) {
	read := opts.Read
	if read == nil {
		acc := trust.System()
		read = func(path string) (trust.File, error) { return trust.Read(path, acc) }
	}
	tf, err := read(file)
	if err != nil {
		return convert.Source{}, nil, err
	}
	if len(tf.UserLinks) > 0 {
		// A link a user made could point root's read, or the
		// evaluation, at another user's or root's own files.
		return convert.Source{}, nil, fmt.Errorf("read %s: %s is a symbolic link that root does not own: give the file's real path", file, tf.UserLinks[0])
	}
	src, ev, err := load(ctx, file, tf, opts)
	if err == nil {
		src.Owner, src.OwnerKnown = tf.UID, true
		src.Speaker, src.Why = tf.Speaker(), tf.Why()
	}
	return src, ev, err
}

func load(ctx context.Context, file string, tf trust.File, opts Options) (convert.Source, *Evaluated, error) {
	abs, data := tf.Path, tf.Data
	ext := strings.ToLower(filepath.Ext(abs))
	switch ext {
	case ".js", ".cjs", ".mjs":
		return evaluate(ctx, abs, "module", tf, opts)
	case ".json", ".json5", ".yaml", ".yml", ".pm2":
		// PM2 reads a .json5 as it reads a .json (its file type test
		// finds ".json" in the name): JSON, or else a JavaScript
		// expression, which JSON5 is.
	default:
		if !strings.HasPrefix(filepath.Base(abs), "dump.pm2") {
			// Anything else: a dump under another name is still JSON.
			if v, err := convert.DecodeJSON(data); err == nil && convert.IsDump(abs, v) {
				src, err := convert.FromValue(abs, v)
				return src, nil, err
			}
			return convert.Source{}, nil, fmt.Errorf("%s: not an ecosystem file PM2 reads (.js, .cjs, .mjs, .json, .json5, .yaml, .yml, a package.json with \"apps\") or a dump.pm2", file)
		}
	}
	src, err := convert.Parse(abs, data)
	var nj *convert.NotJSONError
	if errors.As(err, &nj) {
		// PM2 evaluates a .json as a JavaScript expression (comments,
		// unquoted keys): so does bm2 import, in the same confinement.
		return evaluate(ctx, abs, "json", tf, opts)
	}
	return src, nil, err
}

// loader is the program node runs: argv is [mode, file]; the result goes
// to fd 3 as {"value": ...} or {"error": "..."}.
const loader = `'use strict';
const fs = require('node:fs');
const vm = require('node:vm');
const { pathToFileURL } = require('node:url');
const [mode, file] = process.argv.slice(1);
// What bm2 read and judged, never the file read again by its path.
const src = fs.readFileSync(4, 'utf8');
(async () => {
  let v;
  if (mode === 'json') {
    v = vm.runInNewContext('(' + src + '\n)', Object.create(null), { filename: file, timeout: 2000 });
  } else {
    const url = pathToFileURL(file).href;
    require('node:module').registerHooks({ load(u, context, next) {
      if (u !== url) return next(u, context);
      let format = context.format;
      if (!format) {
        // A .js no package.json types: CommonJS, unless only a module parses.
        try { new vm.Script('(function (exports, require, module, __filename, __dirname) {' + src + '\n})'); format = 'commonjs'; }
        catch (e) { format = 'module'; }
      }
      return { format, source: src, shortCircuit: true };
    } });
    const ns = await import(url);
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

// nobody is who a file is evaluated as that is root's, or that no
// single user could have written (trust.Nobody).
const nobody = 65534

// evaluate runs the loader on the bytes of tf (see the package doc).
func evaluate(ctx context.Context, file, mode string, tf trust.File, opts Options) (convert.Source, *Evaluated, error) {
	ev := &Evaluated{}
	var cred *syscall.Credential
	home := "/"
	if os.Geteuid() == 0 {
		ev.As, cred = "nobody", &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}
		switch uid := tf.Speaker(); {
		case uid == trust.Nobody:
			ev.As = "nobody (no single user could have written the file: " + tf.Why() + ")"
		case uid == 0:
			ev.As = "nobody (the file is root's)"
		case uid != tf.UID:
			// Root's file in a directory of uid's: its code is root's,
			// and not uid's to run as uid.
			ev.As = fmt.Sprintf("nobody (the file is uid %d's, in a directory of uid %d)", tf.UID, uid)
		default:
			gid := uid
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
			cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
		}
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
		return convert.Source{}, nil, fmt.Errorf("%s is JavaScript, and evaluating it needs Node.js 24 or newer on PATH: runtime %s", file, rc.Problem)
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
		return convert.Source{}, nil, err
	}
	defer r.Close()
	sr, sw, err := os.Pipe()
	if err != nil {
		w.Close()
		return convert.Source{}, nil, err
	}
	defer sr.Close()
	cmd := exec.CommandContext(ctx, rc.Path,
		"--permission", "--allow-fs-read=*", "--max-old-space-size=256", "--no-warnings",
		"--eval", loader, "--", mode, file)
	cmd.Dir = filepath.Dir(file)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8", "NO_COLOR=1"}
	cmd.Stdin = nil // /dev/null
	stderr := safefs.Capped{Max: 64 << 10}
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	cmd.ExtraFiles = []*os.File{w, sr} // fd 3: the result; fd 4: the source
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		w.Close()
		sw.Close()
		return convert.Source{}, nil, fmt.Errorf("evaluate %s: start %s as %s in %s: %w", file, rc.Path, ev.As, cmd.Dir, err)
	}
	w.Close()
	sr.Close()
	go func() {
		sw.Write(tf.Data) // fails only when node is gone: its error says why
		sw.Close()
	}()
	type output struct {
		b   []byte
		err error // only ErrTooLarge is looked at: a short read is JSON that does not parse
	}
	outc := make(chan output, 1)
	go func() {
		b, err := safefs.ReadAll(r, maxOutput)
		outc <- output{b, err}
	}()
	werr := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything it left in its group
	got := <-outc
	out := got.b
	what := fmt.Sprintf("evaluate %s (node %s, as %s)", file, ev.Version, ev.As)
	if ctx.Err() == context.DeadlineExceeded {
		return convert.Source{}, nil, fmt.Errorf("%s: no result within %s: an ecosystem file must only describe its apps", what, timeout)
	}
	if errors.Is(got.err, safefs.ErrTooLarge) {
		return convert.Source{}, nil, fmt.Errorf("%s: its apps make more than %d MiB of JSON", what, maxOutput>>20)
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
		return convert.Source{}, nil, fmt.Errorf("%s: it gave no apps: %s", what, firstLines(msg, 3))
	}
	if res.Error != nil {
		msg := *res.Error
		if rest, ok := strings.CutPrefix(msg, "ERR_ACCESS_DENIED: "); ok {
			return convert.Source{}, nil, fmt.Errorf("%s: it tried to write a file, start a process or load an addon, which bm2 import does not allow (an ecosystem file must only describe its apps): %s", what, firstLines(rest, 2))
		}
		return convert.Source{}, nil, fmt.Errorf("%s: %s", what, firstLines(msg, 3))
	}
	v, err := convert.DecodeJSON(res.Value)
	if err != nil {
		return convert.Source{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	src, err := convert.FromValue(file, v)
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
