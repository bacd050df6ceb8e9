// Test app for Node.js. Behaviour comes from the environment:
//   REUSE_PORT=0       listen without reusePort (the probe must catch it)
//   LISTEN_DELAY_MS=N  start listening only after N ms
//   NO_LISTEN=1        never listen (not a network service)
//   HOST=127.0.0.1     listen on one address only
//   CRASH_INSTANCE=i, CRASH_AFTER_MS=N   instance i exits 1 after N ms
const http = require("node:http");

const env = process.env;
const port = Number(env.BM2_APP_PORT);
const instance = env.BM2_APP_INSTANCE;

if (env.CRASH_INSTANCE === instance) {
  setTimeout(() => { console.error("crashing on purpose"); process.exit(1); }, Number(env.CRASH_AFTER_MS ?? 200));
}

const server = http.createServer((req, res) => {
  res.setHeader("connection", "close");
  res.end(`${env.BM2_APP_NAME} ${instance} ${process.pid}\n`);
});

function start() {
  const opts = { port, reusePort: env.REUSE_PORT !== "0" };
  if (env.HOST) opts.host = env.HOST;
  server.listen(opts, () => console.log(`instance ${instance} listening on ${port} reusePort=${opts.reusePort} at_ms=${Date.now()}`));
}

if (env.NO_LISTEN === "1") {
  setInterval(() => {}, 1 << 30);
} else if (env.LISTEN_DELAY_MS) {
  setTimeout(start, Number(env.LISTEN_DELAY_MS));
} else {
  start();
}
