// Every call form of net.Server.prototype.listen (node:net's documented
// ones, and the odd ones it takes): for each, what listen received (from
// spy.cjs) and, where the form names a fixed TCP port, whether a second
// server listening the same way could join it. One JSON line per form.
//   TEST_PORT    the instance's port (the preload reads BM2_APP_PORT)
//   OTHER_PORT   a free port that is not the instance's
//   SOCKET_DIR   a directory for Unix sockets
"use strict";
const http = require("node:http");
const net = require("node:net");
const path = require("node:path");

const P = Number(process.env.TEST_PORT);
const Q = Number(process.env.OTHER_PORT);
const dir = process.env.SOCKET_DIR;
const cb = () => {};

// [name, args, twice]: twice when a second listener of the same form
// competes for the same port.
const forms = [
  ["listen(port)", () => [P], true],
  ["listen(port, cb)", () => [P, cb], true],
  ["listen(port, host)", () => [P, "0.0.0.0"], true],
  ["listen(port, host, cb)", () => [P, "0.0.0.0", cb], true],
  ["listen(port, host, backlog, cb)", () => [P, "0.0.0.0", 64, cb], true],
  ["listen(port, backlog, cb)", () => [P, 64, cb], true],
  ["listen(port, loopback host, cb)", () => [P, "127.0.0.1", cb], true],
  ["listen(port as string)", () => [String(P)], true],
  ["listen(port as string, host, cb)", () => [String(P), "0.0.0.0", cb], true],
  ["listen(options)", () => [{ port: P }], true],
  ["listen(options, cb)", () => [{ port: P, host: "0.0.0.0" }, cb], true],
  ["listen(options, backlog, cb)", () => [{ port: P, backlog: 32 }, 64, cb], true],
  ["listen(options, port as string)", () => [{ port: String(P), exclusive: false }], true],
  ["listen(options, reusePort: true)", () => [{ port: P, reusePort: true }], true],
  ["listen(options, reusePort: false)", () => [{ port: P, reusePort: false }], true],
  ["listen(other port)", () => [Q], true],
  ["listen(other port, host, cb)", () => [Q, "0.0.0.0", cb], true],
  ["listen(options, other port)", () => [{ port: Q }], true],
  ["listen(port 0)", () => [0], false],
  ["listen(options, port 0)", () => [{ port: 0 }], false],
  ["listen()", () => [], false],
  ["listen(cb)", () => [cb], false],
  ["listen(null, cb)", () => [null, cb], false],
  ["listen(options, port undefined)", () => [{ port: undefined }], false],
  ["listen(path)", () => [path.join(dir, "a.sock")], true],
  ["listen(options, path)", () => [{ path: path.join(dir, "b.sock") }], true],
  ["listen(handle)", () => [held()._handle], false],
  ["listen(server)", () => [held()], false],
  ["listen(options, handle and port)", () => [{ handle: held()._handle, port: P }], false],
  ["listen(options, fd and port)", () => [{ fd: held()._handle.fd, port: P }], false],
];

// held is a server listening on a port of its own, for the handle forms.
let heldServers = [];
function held() {
  return heldServers.shift();
}
async function hold(n) {
  for (let i = 0; i < n; i++) {
    const s = net.createServer();
    await new Promise((resolve) => s.listen(0, "127.0.0.1", resolve));
    heldServers.push(s);
  }
}

function attempt(args) {
  const s = http.createServer();
  const before = globalThis.received.length;
  return new Promise((resolve) => {
    const done = (result) => resolve({ s, result, got: globalThis.received.slice(before) });
    s.once("listening", () => done("ok"));
    s.once("error", (e) => done(e.code));
    try {
      s.listen(...args);
    } catch (e) {
      done(e.code || e.message);
    }
  });
}

(async () => {
  await hold(4);
  for (const [name, make, twice] of forms) {
    const args = make();
    const first = await attempt(args);
    const line = {
      name,
      same: first.got.length === 1 && first.got[0].args.length === args.length && first.got[0].args.every((g, i) => g === args[i]),
      got: first.got.length === 1 ? first.got[0].shown : null,
      first: first.result,
    };
    let second;
    if (twice && first.result === "ok") {
      second = await attempt(make());
      line.second = second.result;
    }
    console.log(JSON.stringify(line));
    for (const a of [first, second]) if (a && a.s.listening) await new Promise((r) => a.s.close(r));
  }
  process.exit(0);
})();
