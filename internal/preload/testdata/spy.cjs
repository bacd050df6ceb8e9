// Loaded before reuseport.cjs (--require spy.cjs --require reuseport.cjs;
// --preload twice under Bun): records what node:net's listen, or
// Bun.serve, receives, which is what the preload passed on, as it was
// then (node:net changes its options object as it goes).
"use strict";
globalThis.received = [];
const record = (args) => globalThis.received.push({ args, shown: show(args) });
if (typeof Bun === "object") {
  const serve = Bun.serve;
  Bun.serve = function (...args) {
    record(args);
    return Reflect.apply(serve, this, args);
  };
} else {
  const net = require("node:net");
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (...args) {
    record(args);
    return Reflect.apply(listen, this, args);
  };
}

// show is args as JSON can carry them: a function is "fn", a server or
// a handle "handle", undefined "undefined".
function show(args) {
  const one = (a) => {
    if (typeof a === "function") return "fn";
    if (a === undefined) return "undefined";
    if (a === null || typeof a !== "object") return a;
    if (a.constructor && ["Server", "TCP"].includes(a.constructor.name)) return "handle";
    const o = {};
    for (const k of Object.keys(a)) o[k] = k === "handle" ? "handle" : one(a[k]);
    return o;
  };
  return args.map(one);
}
