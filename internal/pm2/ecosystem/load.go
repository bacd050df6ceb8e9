package ecosystem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/pm2/convert"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/internal/termtext"
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
	// Closed is the file's directory when As could not enter it: the
	// file was evaluated from / (its process.cwd() saying the directory
	// all the same), and cannot have loaded other files from there.
	Closed string
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
	if len(bytes.TrimSpace(data)) == 0 {
		// Not PM2's "Unexpected token ')'" of an empty expression.
		return convert.Source{}, nil, fmt.Errorf("%s is empty: an ecosystem file describes its apps (module.exports = { apps: [ ... ] } in a .js file, {\"apps\": [ ... ]} in a .json)", file)
	}
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
// to fd 3 as {"value": ...} or {"error": "...", "where": ...}. A syntax
// error's where is {file, line, source, caret} when its stack tells
// (what the file's own code and CommonJS compile), or "stderr" when only
// node's report of an uncaught error does (an ES module's): the loader
// then writes stderrMark to stderr and throws the error uncaught.
const loader = `'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');
const { pathToFileURL } = require('node:url');
const [mode, file] = process.argv.slice(1);
// What bm2 read and judged, never the file read again by its path.
const src = fs.readFileSync(4, 'utf8');
const wrapper = '(function (exports, require, module, __filename, __dirname) {';
let cjsError; // why the file did not compile as CommonJS
// It runs from /, and from its file's directory when it may enter it;
// where it may not, process.cwd() still says that directory, as under PM2
// (an expression, mode json, loads nothing from there).
const dir = path.dirname(file);
let closed = false;
try { process.chdir(dir); } catch (_) { closed = mode !== 'json'; process.cwd = () => dir; }
(async () => {
  let v;
  if (mode === 'json') {
    v = vm.runInNewContext('(' + src + '\n)', Object.create(null), { filename: file, timeout: 2000 });
  } else {
    const url = pathToFileURL(file).href;
    // CommonJS is compiled here, from its source, as node's require
    // would: node's own loader would look the file up again by its path.
    globalThis[Symbol.for('bm2.cjs')] = () => {
      const m = new Module(file);
      m.filename = file;
      m.paths = Module._nodeModulePaths(dir);
      m._compile(src, file);
      m.loaded = true;
      return m.exports;
    };
    Module.registerHooks({ resolve(spec, context, next) {
      if (spec !== url) return next(spec, context);
      // A directory it may not enter: the file is not looked up.
      try { return next(spec, context); } catch (e) { return { url, shortCircuit: true }; }
    }, load(u, context, next) {
      if (u !== url) return next(u, context);
      let format = context.format || { '.mjs': 'module', '.cjs': 'commonjs' }[path.extname(file)];
      if (!format) {
        // A .js no package.json types: CommonJS, unless only a module parses.
        try { new vm.Script(wrapper + src + '\n})', { filename: file }); format = 'commonjs'; }
        catch (e) { cjsError = e; format = 'module'; }
      }
      if (format === 'commonjs') {
        return { format: 'module', source: "export default globalThis[Symbol.for('bm2.cjs')]();", shortCircuit: true };
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
  fs.writeSync(3, '{"closed":' + closed + ',"value":' + text + '}');
})().then(() => process.exit(0), (e) => {
  // Where a syntax error is: the head of its stack, "FILE:LINE", the
  // line, a caret under the token, when node put them there.
  const whereOf = (e) => {
    const l = String(e.stack || '').split('\n');
    const m = /^(.*):(\d+)$/.exec(l[0]);
    if (!m || l.length < 4 || !/^[\s^]*\^[\s^]*$/.test(l[2]) || l[3] !== '') return undefined;
    let source = l[1], caret = l[2];
    const line = Number(m[2]);
    // Line 1 begins with what wraps the source: not the file's.
    for (const pre of [wrapper, '(']) {
      if (line === 1 && m[1] === file && source.startsWith(pre)) {
        source = source.slice(pre.length);
        caret = caret.slice(pre.length);
        break;
      }
    }
    return { file: m[1], line, source, caret };
  };
  // CommonJS says "export" or "import" is unexpected in a module.
  const moduleOnly = /Cannot use import statement|Unexpected token 'export'|import\.meta|top level bodies of modules/;
  let msg = String(e);
  let where;
  if (e && typeof e === 'object' && e.message !== undefined) {
    const at = String(e.stack || '').split('\n').find((l) => l.includes(file));
    msg = (e.name || 'Error') + ': ' + e.message;
    if (e.name === 'SyntaxError') where = whereOf(e);
    if (!where && e.name === 'SyntaxError' && !at) {
      // Not thrown by the file's code (JSON.parse, say): it does not compile.
      if (cjsError && !moduleOnly.test(cjsError.message) && whereOf(cjsError)) {
        // A .js that is not a module either: CommonJS's error is its own.
        msg = 'SyntaxError: ' + cjsError.message;
        where = whereOf(cjsError);
      } else {
        where = 'stderr';
      }
    }
    if (!where && at) msg += ' (at ' + at.trim().replace(/^at /, '') + ')';
  }
  if (e && e.code === 'ERR_ACCESS_DENIED') msg = 'ERR_ACCESS_DENIED: ' + msg;
  try { fs.writeSync(3, JSON.stringify({ error: msg, where, closed })); } catch (_) {}
  if (where === 'stderr') {
    // Only node's report of an uncaught error shows where a module is broken.
    fs.writeSync(2, '\n\u0000bm2: where\u0000\n');
    setImmediate(() => { throw e; });
    return;
  }
  process.exit(1);
});
`

// NoNodeError is a JavaScript file that was not evaluated: no Node.js 24
// or newer was found.
type NoNodeError struct {
	File    string
	Problem string // after "runtime ": what was found
}

func (e *NoNodeError) Error() string {
	return fmt.Sprintf("%s is JavaScript, and evaluating it needs Node.js 24 or newer on PATH: runtime %s", e.File, e.Problem)
}

// stderrMark is what the loader writes to stderr before node's report
// of an uncaught syntax error (see loader).
const stderrMark = "\x00bm2: where\x00\n"

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
		return convert.Source{}, nil, &NoNodeError{File: file, Problem: rc.Problem}
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
	// From /: the loader enters the file's directory itself where it
	// may (a directory only its owner may enter, /root or a mktemp -d,
	// is not nobody's to enter, and the file is evaluated all the same).
	cmd.Dir = "/"
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
		return convert.Source{}, nil, fmt.Errorf("evaluate %s: start %s as %s: %w", file, rc.Path, ev.As, err)
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
		Value  json.RawMessage `json:"value"`
		Error  *string         `json:"error"`
		Where  json.RawMessage `json:"where"`  // a syntax error's (see loader)
		Closed bool            `json:"closed"` // it could not enter the file's directory
	}
	if err := json.Unmarshal(out, &res); err != nil || (res.Value == nil && res.Error == nil) {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" && werr != nil {
			msg = werr.Error()
		}
		return convert.Source{}, nil, fmt.Errorf("%s: it gave no apps: %s", what, firstLines(msg, 3))
	}
	if res.Closed {
		ev.Closed = filepath.Dir(file)
	}
	if res.Error != nil {
		msg := *res.Error
		if res.Closed && closedRE.MatchString(msg) {
			msg += fmt.Sprintf(" (%s cannot enter %s, so what the file loads from there cannot be read)", ev.As, ev.Closed)
		}
		if rest, ok := strings.CutPrefix(msg, "ERR_ACCESS_DENIED: "); ok {
			return convert.Source{}, nil, fmt.Errorf("%s: it tried to write a file, start a process or load an addon, which bm2 import does not allow (an ecosystem file must only describe its apps): %s", what, firstLines(rest, 2))
		}
		if at := whereBroken(res.Where, stderr.String()); at != nil {
			return convert.Source{}, nil, at.err(file, mode, tf.Data, msg, ev)
		}
		return convert.Source{}, nil, fmt.Errorf("%s: %s", what, termtext.Escape(firstLines(msg, 3)))
	}
	v, err := convert.DecodeJSON(res.Value)
	if err != nil {
		return convert.Source{}, nil, fmt.Errorf("%s: %w", what, err)
	}
	src, err := convert.FromValue(file, v)
	return src, ev, err
}

// brokenAt is where a file does not compile: the file (the ecosystem
// file or one it loads), the line, and the line's text with a caret under
// what is wrong, as node shows them.
type brokenAt struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Source string `json:"source"`
	Caret  string `json:"caret"`
}

var (
	// closedRE: an error that a directory the evaluation could not
	// enter may explain.
	closedRE = regexp.MustCompile(`EACCES|permission denied|Cannot find module|ERR_MODULE_NOT_FOUND`)
	headRE   = regexp.MustCompile(`^(.+):([0-9]+)$`)
	caretRE  = regexp.MustCompile(`^[\s^]*\^[\s^]*$`)
)

// whereBroken reads where from the loader's result: an object, or
// "stderr" for the head of node's report of an uncaught error, after
// stderrMark.
func whereBroken(where json.RawMessage, stderr string) *brokenAt {
	var at brokenAt
	var s string
	switch {
	case len(where) == 0:
		return nil
	case json.Unmarshal(where, &s) == nil:
		i := strings.LastIndex(stderr, stderrMark)
		if s != "stderr" || i < 0 {
			return nil
		}
		lines := strings.Split(stderr[i+len(stderrMark):], "\n")
		m := headRE.FindStringSubmatch(lines[0])
		if m == nil {
			return nil
		}
		at.File = m[1]
		if u, err := url.Parse(m[1]); err == nil && u.Scheme == "file" {
			at.File = u.Path
		}
		at.Line, _ = strconv.Atoi(m[2])
		if len(lines) > 2 && caretRE.MatchString(lines[2]) {
			at.Source, at.Caret = lines[1], lines[2]
		}
	case json.Unmarshal(where, &at) != nil:
		return nil
	}
	if at.Line < 1 || at.File == "" {
		return nil
	}
	return &at
}

// err says that file is broken, where, and how it was evaluated: the
// line and its caret follow on lines of their own.
func (at *brokenAt) err(file, mode string, src []byte, msg string, ev *Evaluated) error {
	how := fmt.Sprintf("evaluated by node %s as %s", ev.Version, ev.As)
	msg = termtext.Escape(firstLines(msg, 1))
	if at.File == file && mode == "json" && at.Line > bytes.Count(src, []byte("\n"))+1 {
		// Past the last line: where the loader closed the expression.
		return fmt.Errorf("%s is broken: it ends before its value does (is a } or ] missing?): %s (%s)", file, msg, how)
	}
	which := termtext.Escape(at.File)
	if at.File != file {
		which += ", which " + filepath.Base(file) + " loads,"
	}
	text := fmt.Sprintf("%s is broken at line %d: %s (%s)", which, at.Line, msg, how)
	if at.Source != "" {
		source, caret := snippet(at.Source, at.Caret)
		num := strconv.Itoa(at.Line)
		text += fmt.Sprintf("\n  %s | %s\n  %s | %s", num, source, strings.Repeat(" ", len(num)), caret)
	}
	return errors.New(text)
}

// snippet is a line of source and its caret as they can be printed:
// tabs as spaces (the caret stays under its token), at most some 120
// characters around the caret, control characters escaped.
func snippet(source, caret string) (string, string) {
	source = strings.ReplaceAll(source, "\t", " ")
	caret = strings.TrimRight(strings.ReplaceAll(caret, "\t", " "), " ")
	const width = 120
	if col := strings.Index(caret, "^"); col > width/2 && col <= len(source) {
		cut := col - width/4
		for cut > 0 && !utf8.RuneStart(source[cut]) {
			cut--
		}
		source, caret = "..."+source[cut:], "   "+caret[cut:]
	}
	if len(source) > width {
		cut := width
		for cut > 0 && !utf8.RuneStart(source[cut]) {
			cut--
		}
		source = source[:cut] + "..."
	}
	return termtext.Escape(source), caret
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
