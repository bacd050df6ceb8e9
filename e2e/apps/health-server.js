// Test app for the HTTP health check (Node.js, reusePort). It serves its
// port, and answers the health check on its own port, BM2_HEALTH_PORT:
//   GET /healthz   200 "ok"
//   GET /hang      answers, then blocks its event loop forever: both
//                  ports stay open (the kernel still completes
//                  connections), nothing answers any more
// A run started while ./unhealthy exists answers /healthz 503 (a bad
// deploy). Its main port answers "instance N".
const http = require("node:http");
const fs = require("node:fs");
const env = process.env;
const me = `instance ${env.BM2_APP_INSTANCE}`;
const sick = fs.existsSync("unhealthy");

http.createServer((req, res) => {
  res.setHeader("connection", "close");
  res.end(me + "\n");
}).listen({ port: Number(env.BM2_APP_PORT), reusePort: true }, () => console.log(`${me} listening`));

http.createServer((req, res) => {
  res.setHeader("connection", "close");
  if (req.url === "/hang") {
    res.end("hanging\n", () => setTimeout(() => { console.log(`${me} hangs`); for (;;) {} }, 10));
    return;
  }
  if (req.url === "/healthz" && sick) res.statusCode = 503;
  res.end(req.url === "/healthz" ? (sick ? "sick\n" : "ok\n") : "?\n");
}).listen({ port: Number(env.BM2_HEALTH_PORT), host: "127.0.0.1" });
