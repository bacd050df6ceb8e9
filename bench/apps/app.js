// The hello-world app every bm2-vs-PM2 benchmark runs, unchanged under both.
//
// Port: $BM2_APP_PORT (bm2), else $PORT (PM2), else 3000. Under bm2 (cluster
// mode: every instance binds the port itself) it listens with reusePort;
// under PM2's cluster mode it listens normally and node:cluster's primary,
// PM2's God daemon, shares the port with the workers.
//
// On SIGTERM (bm2, systemd) or SIGINT (PM2) it shuts down gracefully: it
// stops accepting, answers every further request with "Connection: close"
// and exits once every connection is done (at most 1.5 s later).
const http = require("node:http");

const port = Number(process.env.BM2_APP_PORT ?? process.env.PORT ?? 3000);
const reusePort = process.env.BM2_APP_PORT !== undefined;
const body = `hello world from ${process.pid}\n`;
let closing = false;

const server = http.createServer((req, res) => {
  if (closing) res.setHeader("connection", "close");
  res.end(body);
});

server.listen({ port, reusePort }, () => console.log(`listening on ${port} reusePort=${reusePort}`));

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
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
