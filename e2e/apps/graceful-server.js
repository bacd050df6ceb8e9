// Test app for rolling reloads (Node.js >= 24): listens with reusePort on
// $BM2_APP_PORT and, on SIGTERM, stops accepting and finishes what it has,
// as "Reloading without dropping requests" in docs/reload.md recommends:
//   - every response from then on says "Connection: close", so keep-alive
//     clients finish their request and reconnect (to another instance);
//   - the listener closes at once (net.Server's close: http.Server's own
//     close() would also drop idle keep-alive connections at once, racing
//     requests already on their way);
//   - connections still idle a second later are closed; the process exits
//     when the last one is gone.
// (What apps that do less on SIGTERM lose is make bench's figure
// reloadmatrix: bench/apps/app.js's SHUTDOWN.)
const http = require("node:http");
const net = require("node:net");

const env = process.env;
const instance = env.BM2_APP_INSTANCE;
const port = Number(env.BM2_APP_PORT);
let closing = false;

const server = http.createServer((req, res) => {
  if (closing) res.setHeader("connection", "close");
  res.end(`${env.BM2_APP_NAME} ${instance} ${process.pid}\n`);
});
server.listen({ port, reusePort: true }, () => console.log(`instance ${instance} listening on ${port}`));

process.on("SIGTERM", () => {
  console.log(`instance ${instance} closing`);
  closing = true;
  net.Server.prototype.close.call(server);
  setTimeout(() => server.closeIdleConnections(), 1000).unref();
});
