// Test app for bm2 export kube on a real engine (Node.js). It answers
// every request on BM2_APP_PORT with what a pod's sandbox lets it be:
//   {"host":..., "uid":..., "instance":..., "rootWrite":..., "stateWrite":..., "tmpWrite":...}
// rootWrite is "EROFS" under a read-only root file system; stateWrite and
// tmpWrite "ok" where the export gave the app writable directories.
const http = require("node:http");
const fs = require("node:fs");
const os = require("node:os");
const env = process.env;

function attempt(path) {
  try { fs.writeFileSync(path, "x"); return "ok"; } catch (e) { return e.code || String(e); }
}

http.createServer((req, res) => {
  res.setHeader("connection", "close");
  res.end(JSON.stringify({
    host: os.hostname(),
    uid: process.getuid(),
    instance: env.BM2_APP_INSTANCE ?? null,
    name: env.BM2_APP_NAME,
    rootWrite: attempt("/written-by-app"),
    stateWrite: attempt(`${env.STATE_DIRECTORY}/hits`),
    tmpWrite: attempt("/tmp/hits"),
  }) + "\n");
}).listen({ port: Number(env.BM2_APP_PORT) }, () => console.log("listening"));
