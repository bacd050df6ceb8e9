// bm2's reusePort preload, for projects with reuseport = "preload" in
// bm2.toml(5): it gives the app's listener on the instance's port
// SO_REUSEPORT when the app does not ask for it, so that an app written
// for PM2's cluster mode (where node:cluster's master shared the port)
// runs unchanged.
//
// bm2 installs it root's, beside bm2-probe (/usr/lib/bm2/reuseport.cjs),
// where the app's user cannot change it, and names it on each instance's
// own command line: `node --require FILE script` or `bun --preload FILE
// script`. So it reaches no other process: not through the environment
// (as NODE_OPTIONS would), and not through process.execArgv, which
// child_process.fork() passes on and from which it takes itself out. A
// child process that listens on the port is the app binding it some other
// way, and the probe judges it.
//
// It reads BM2_APP_PORT, once; under Bun, for a Bun.serve given no port,
// also the variables Bun takes its default port from (BUN_PORT, PORT,
// NODE_PORT) and whether its command line has --port. It reads no other
// variable and no file. Without a valid BM2_APP_PORT it changes nothing.
//
// Node.js: net.Server.prototype.listen (http, https, http2, tls and every
// framework on them) adds reusePort: true to a TCP listen on the
// instance's port, in each of the call forms node:net documents:
// listen(options[, cb]) and listen(port[, host][, backlog][, cb]), the
// port a number or a numeric string. A listen that sets reusePort (true
// or false), one on another port or on port 0 (or none), a path (a Unix
// socket), a handle or a file descriptor is passed on untouched.
//
// Bun: Bun.serve (and so `export default { fetch }`) defaults to
// reusePort: true on the instance's port. Bun's node:http passes
// reusePort: false to Bun.serve whatever the app asked, and that is
// honoured: an Express or Fastify app on Bun cannot share a port, and the
// probe stops it as it would without the preload.
"use strict";

(() => {
  const port = portNumber(process.env.BM2_APP_PORT);
  if (port === undefined || port === 0) return;
  leaveExecArgv();
  if (typeof Bun === "object" && Bun !== null && typeof Bun.serve === "function") {
    wrapBunServe();
  } else {
    wrapListen();
  }

  // portNumber reads a port from the environment: decimal digits, 0 to
  // 65535; undefined otherwise (Bun, too, passes over a port variable
  // that holds something else).
  function portNumber(s) {
    if (typeof s !== "string" || !/^[0-9]{1,5}$/.test(s)) return undefined;
    const n = Number(s);
    return n <= 65535 ? n : undefined;
  }

  // isPort tells whether a listen's port is the instance's: a number, or a
  // string Node.js reads as that number (listen("3000")).
  function isPort(p) {
    if (typeof p === "number") return p === port;
    if (typeof p === "string") return p.trim() !== "" && Number(p) === port;
    return false;
  }

  // withReusePort is a copy of options, prototype included, that adds
  // reusePort: true; the app's own object is left as it was.
  function withReusePort(options) {
    return Object.assign(Object.create(Object.getPrototypeOf(options)), options, { reusePort: true });
  }

  // leaveExecArgv takes `--require FILE` (`--preload FILE` under Bun) out
  // of process.execArgv, so that a child process forked by the app does
  // not load it.
  function leaveExecArgv() {
    const argv = process.execArgv;
    if (!Array.isArray(argv)) return;
    for (let i = 0; i < argv.length; i++) {
      const [flag, inline] = splitFlag(argv[i]);
      if (!["--require", "-r", "--preload"].includes(flag)) continue;
      const file = inline !== undefined ? inline : argv[i + 1];
      if (!isSelf(file)) continue;
      argv.splice(i, inline !== undefined ? 1 : 2);
      return;
    }
  }

  function splitFlag(arg) {
    const eq = typeof arg === "string" ? arg.indexOf("=") : -1;
    return eq < 0 ? [arg, undefined] : [arg.slice(0, eq), arg.slice(eq + 1)];
  }

  function isSelf(file) {
    if (typeof file !== "string") return false;
    const path = require("node:path");
    if (path.resolve(file) === __filename) return true;
    try {
      return require("node:fs").realpathSync(file) === __filename;
    } catch {
      return false;
    }
  }

  function wrapListen() {
    const net = require("node:net");
    const nodeListen = net.Server.prototype.listen;
    // args as node:net reads them (lib/net.js, normalizeArgs and listen):
    // an object first is options or a handle; a number or a numeric string
    // first is the port, with a host after it when a string follows. The
    // arguments after the first are kept as they are, so the backlog and
    // the callback are read from them as before.
    function withInstanceReusePort(args) {
      const first = args[0];
      if (typeof first === "object" && first !== null) {
        // node:net takes a handle or an fd before a port.
        if (first._handle || first.handle || (typeof first.fd === "number" && first.fd >= 0)) return args;
        if (first.reusePort !== undefined || !isPort(first.port)) return args;
        return [withReusePort(first), ...args.slice(1)];
      }
      // A path, a callback, no port, another port.
      if (!isPort(first)) return args;
      const options = { port: first, reusePort: true };
      if (args.length > 1 && typeof args[1] === "string") options.host = args[1];
      return [options, ...args.slice(1)];
    }
    net.Server.prototype.listen = function listen(...args) {
      return Reflect.apply(nodeListen, this, withInstanceReusePort(args));
    };
  }

  function wrapBunServe() {
    const bunServe = Bun.serve;
    // Bun.serve's default port: the first of $BUN_PORT, $PORT, $NODE_PORT
    // that holds a port, read when the server starts, as Bun does; then
    // the --port flag (left alone: not known here) or 3000.
    function defaultPort() {
      for (const name of ["BUN_PORT", "PORT", "NODE_PORT"]) {
        const n = portNumber(process.env[name]);
        if (n !== undefined) return n;
      }
      const argv = Array.isArray(process.execArgv) ? process.execArgv : [];
      if (argv.some((a) => a === "--port" || String(a).startsWith("--port="))) return undefined;
      return 3000;
    }
    function onInstancePort(options) {
      if (options.unix !== undefined) return false;
      return options.port === undefined ? defaultPort() === port : isPort(options.port);
    }
    Bun.serve = function serve(options, ...rest) {
      if (typeof options === "object" && options !== null && options.reusePort === undefined && onInstancePort(options)) {
        options = withReusePort(options);
      }
      return Reflect.apply(bunServe, this, [options, ...rest]);
    };
  }
})();
