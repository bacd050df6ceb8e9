// Test app that ignores SIGTERM and has a child process: stopping it must
// take stop_timeout_ms, then SIGKILL the whole tree.
const http = require("node:http");
const { spawn } = require("node:child_process");
process.on("SIGTERM", () => console.log("ignoring SIGTERM"));
const child = spawn("sleep", ["1000"], { stdio: "ignore" });
console.log(`child pid ${child.pid}`);
http.createServer((req, res) => res.end("stubborn\n")).listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true });
