// Test app for the privilege tests (Node.js, reusePort). What it can do is
// what an untrusted app can do, as its own user, from inside its sandbox:
//   GET /env?keys=A,B     the values of those variables ("" when unset)
//   GET /crash            exit with status 3
//   GET /exit78           exit with bm2's refusal status, 78
//   GET /forge?fields=... log one journal entry with the given fields
//                         (URL-encoded "K=V" lines) through journald's socket
//   GET /attack?pid=N     try to signal process N and read its environment
//   GET /state            append a line to $STATE_DIRECTORY/hits, return the count
//   GET /cwd-write        append a line to ./data.log (in its cwd), return the count
const http = require("node:http");
const fs = require("node:fs");
const { execFileSync } = require("node:child_process");

const env = process.env;
const port = Number(env.BM2_APP_PORT);

function attempt(f) {
  try { f(); return "ok"; } catch (e) { return e.code || String(e); }
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  res.setHeader("connection", "close");
  switch (url.pathname) {
    case "/env": {
      const out = {};
      for (const k of (url.searchParams.get("keys") || "").split(",")) out[k] = env[k] ?? "";
      return res.end(JSON.stringify(out) + "\n");
    }
    case "/crash":
      res.end("bye\n");
      return setTimeout(() => process.exit(3), 50);
    case "/exit78":
      res.end("bye\n");
      return setTimeout(() => process.exit(78), 50);
    case "/forge": {
      const out = attempt(() => execFileSync("logger", ["--journald"], { input: url.searchParams.get("fields") + "\n" }));
      return res.end(out + "\n");
    }
    case "/attack": {
      const pid = Number(url.searchParams.get("pid"));
      const result = {
        signal: attempt(() => process.kill(pid, 0)),
        environ: attempt(() => fs.readFileSync(`/proc/${pid}/environ`)),
        cmdline: attempt(() => fs.readFileSync(`/proc/${pid}/cmdline`)),
      };
      return res.end(JSON.stringify(result) + "\n");
    }
    case "/state":
    case "/cwd-write": {
      const f = url.pathname === "/state" ? `${env.STATE_DIRECTORY}/hits` : "data.log";
      const out = attempt(() => fs.appendFileSync(f, "hit\n"));
      if (out !== "ok") return res.end(out + "\n");
      return res.end(String(fs.readFileSync(f, "utf8").split("\n").length - 1) + "\n");
    }
  }
  res.end(`${env.BM2_APP_NAME} ${env.BM2_APP_INSTANCE} ${process.getuid()}\n`);
});
server.listen({ port, reusePort: true }, () => console.log(`instance ${env.BM2_APP_INSTANCE} listening on ${port}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
