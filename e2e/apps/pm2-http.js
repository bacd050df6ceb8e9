// A node:http app as it runs in PM2's cluster mode: listen(port, host, cb)
// on process.env.PORT, without reusePort; it knows nothing of bm2. It
// answers with its pid, and on SIGTERM (or PM2's SIGINT) stops accepting
// and finishes what it has.
const http = require("node:http");
const server = http.createServer((req, res) => res.end(`api ${process.pid}\n`));
server.listen(Number(process.env.PORT), "0.0.0.0", () => console.log(`api listening on ${process.env.PORT}`));
const stop = () => server.close();
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
