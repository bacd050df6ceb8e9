// Test app for the port fence (Node.js): serves on its own port
// (BM2_APP_PORT; reusePort in cluster mode) and, asked for
// GET /bind?port=N[&host=H], tries to listen on port N with
// exclusive: true, as an app taking another project's port would. It
// answers "ok <port> i=<instance>" when that worked (and closes the
// socket again), or "<error code> i=<instance>" (EPERM when the fence
// denies the bind). GET /crash exits 1.
const http = require("node:http");
const net = require("node:net");

const env = process.env;
const port = Number(env.BM2_APP_PORT);
const instance = env.BM2_APP_INSTANCE;

const server = http.createServer((req, res) => {
  res.setHeader("connection", "close");
  const url = new URL(req.url, "http://x");
  if (url.pathname === "/crash") {
    res.end("crashing\n", () => process.exit(1));
    return;
  }
  if (url.pathname !== "/bind") {
    res.end(`${env.BM2_APP_NAME} ${instance}\n`);
    return;
  }
  const opts = { port: Number(url.searchParams.get("port")), exclusive: true };
  if (url.searchParams.get("host")) opts.host = url.searchParams.get("host");
  const probe = net.createServer();
  probe.once("error", (err) => res.end(`${err.code} i=${instance}\n`));
  probe.listen(opts, () => {
    const got = probe.address().port;
    probe.close(() => res.end(`ok ${got} i=${instance}\n`));
  });
});

server.listen({ port, reusePort: env.BM2_EXEC_MODE === "cluster" }, () =>
  console.log(`instance ${instance} listening on ${port}`));
