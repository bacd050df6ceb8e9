// An Express 5 app on Node.js 24, as its authors would write one for
// cluster mode: reusePort passed through to server.listen.
const express = require("express");
const app = express();
app.get("/", (req, res) => res.send(`express ${process.env.BM2_APP_INSTANCE}\n`));
const server = app.listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true }, () =>
  console.log(`express listening on ${process.env.BM2_APP_PORT}`));
process.on("SIGTERM", () => server.close());
