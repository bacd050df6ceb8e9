// The same hello-world app for Bun (bm2 only: PM2's cluster mode needs
// node:cluster). Bun's node:http ignores reusePort, so it uses Bun.serve.
const port = Number(process.env.BM2_APP_PORT ?? process.env.PORT ?? 3000);
const body = `hello world from ${process.pid}\n`;

// Bun 1.4.4 closes the connection after a "Connection: close" request but
// does not say so in the response (RFC 9112 9.6: it SHOULD), so wrk would
// send its next request on the dead connection and count a read error for
// every request. Saying it, as Node.js does by itself, avoids that.
const close = { headers: { connection: "close" } };
let closing = false;
const server = Bun.serve({
  port,
  reusePort: true,
  fetch: (req) => (closing || req.headers.get("connection") === "close" ? new Response(body, close) : new Response(body)),
});
console.log(`listening on ${port} reusePort=true`);

// The shutdown of bench/apps/app.js: server.stop() alone closes idle
// keep-alive connections at once, which races with a client's next
// request on them (a read error in wrk for each). So first every
// connection's next response says "Connection: close"; 100 ms later
// (every connection in use has had one) the server stops accepting, lets
// the requests in flight finish, and the app exits (at most 1.5 s later).
function shutdown() {
  if (closing) return;
  closing = true;
  setTimeout(() => {
    server.stop();
    setInterval(() => server.pendingRequests === 0 && process.exit(0), 10);
  }, 100);
  setTimeout(() => process.exit(0), 1500).unref();
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
