// An Express 5 app as it runs in PM2's cluster mode: it listens on
// process.env.PORT (or 3000) and never sets reusePort, since node:cluster's
// master shared the port; it knows nothing of bm2. It answers with its
// pid, and on SIGTERM (or PM2's SIGINT) stops accepting and finishes what
// it has. A listen that fails throws (no callback): the instance crashes.
const express = require("express");
const app = express();
app.get("/", (req, res) => res.send(`web ${process.pid}\n`));
const server = app.listen(process.env.PORT || 3000);
server.on("listening", () => console.log(`web listening on ${process.env.PORT || 3000}`));
const stop = () => server.close();
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
