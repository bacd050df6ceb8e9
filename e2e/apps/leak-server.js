// Test app for the graceful memory restart (Node.js >= 24): listens with
// reusePort on $BM2_APP_PORT and, while ./grow-<its BM2_APP_INSTANCE> exists,
// keeps 20 MB more every second (2 MB every 100 ms, written, so the pages
// count). On SIGTERM it says so with its memory, closes its listener and
// exits once its connections are done, as graceful-server.js does.
const http = require("node:http");
const net = require("node:net");
const fs = require("node:fs");

const env = process.env;
const me = `instance ${env.BM2_APP_INSTANCE}`;
const kept = [];
let closing = false;

const server = http.createServer((req, res) => {
  res.setHeader("connection", "close");
  res.end(`${me} ${process.pid}\n`);
});
server.listen({ port: Number(env.BM2_APP_PORT), reusePort: true }, () => console.log(`${me} listening`));

setInterval(() => {
  if (closing || !fs.existsSync(`grow-${env.BM2_APP_INSTANCE}`)) return;
  kept.push(Buffer.alloc(2 << 20, kept.length & 0xff));
  if (kept.length % 25 === 0) console.log(`${me} keeps ${kept.length * 2} MB, rss ${process.memoryUsage().rss >> 20} MB`);
}, 100);

process.on("SIGTERM", () => {
  closing = true;
  console.log(`${me} got SIGTERM with ${kept.length * 2} MB kept, rss ${process.memoryUsage().rss >> 20} MB`);
  net.Server.prototype.close.call(server, () => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
});
