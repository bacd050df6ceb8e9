// The hello-world app every bm2-vs-PM2 benchmark runs, unchanged under both.
//
// Port: $BM2_APP_PORT (bm2), else $PORT (PM2), else 3000. Under bm2 (cluster
// mode: every instance binds the port itself) it listens with reusePort;
// under PM2's cluster mode it listens normally and node:cluster's primary,
// PM2's God daemon, shares the port with the workers. Its "listening" line
// says when (at_ms, the wall clock in ms).
//
// On SIGTERM (bm2, systemd) or SIGINT (PM2) it shuts down gracefully: it
// stops accepting, answers every further request with "Connection: close"
// and exits once every connection is done (at most 1.5 s later).
//
// Some figures change that through the environment (the default is the
// above for every other figure):
//   - SHUTDOWN=close: only server.close() on those signals (what many apps
//     do); SHUTDOWN=none: no handler at all (the signal kills it);
//   - IGNORE_TERM=1: both signals are ignored (a stop must wait for its
//     timeout and kill it);
//   - REUSE_PORT=0: no reusePort under bm2 either (what bm2's probe stops).
const http = require("node:http");

const env = process.env;
const port = Number(env.BM2_APP_PORT ?? env.PORT ?? 3000);
const reusePort = env.BM2_APP_PORT !== undefined && env.REUSE_PORT !== "0";
const body = `hello world from ${process.pid}\n`;
let closing = false;

const server = http.createServer((req, res) => {
  if (closing) res.setHeader("connection", "close");
  res.end(body);
});

server.listen({ port, reusePort }, () => console.log(`listening on ${port} reusePort=${reusePort} at_ms=${Date.now()}`));

// http.Server#close() also drops idle keep-alive connections at once, which
// races with a client's next request on them; net.Server#close() only stops
// accepting, and each connection ends after its next response (which says
// "Connection: close").
function shutdown() {
  if (closing) return;
  closing = true;
  require("node:net").Server.prototype.close.call(server, () => process.exit(0));
  setTimeout(() => process.exit(0), 1500).unref();
}
if (env.IGNORE_TERM === "1") {
  process.on("SIGTERM", () => console.log("ignoring SIGTERM"));
  process.on("SIGINT", () => console.log("ignoring SIGINT"));
} else if (env.SHUTDOWN === "close") {
  process.on("SIGTERM", () => server.close());
  process.on("SIGINT", () => server.close());
} else if (env.SHUTDOWN !== "none") {
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}
