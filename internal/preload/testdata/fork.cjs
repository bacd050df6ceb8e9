// Listens twice on $PORT, then (the parent only) forks itself, which
// does the same: prints {"argv", "listen"} for the parent and the child.
"use strict";
const http = require("node:http");
const { fork } = require("node:child_process");
const port = Number(process.env.PORT);
const listen = () =>
  new Promise((resolve) => {
    const s = http.createServer();
    s.once("error", (e) => resolve({ s, r: e.code }));
    s.listen(port, () => resolve({ s, r: "ok" }));
  });
(async () => {
  const a = await listen();
  const b = await listen();
  const me = { execArgv: process.execArgv, listen: a.r + " " + b.r };
  for (const x of [a, b]) if (x.s.listening) await new Promise((r) => x.s.close(r));
  if (process.send) {
    process.send(me);
    return process.exit(0);
  }
  const child = fork(__filename, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  child.once("message", (c) => {
    console.log(JSON.stringify({ parent: me, child: c }));
    process.exit(0);
  });
})();
