// An app whose listener is in a child process (child_process.fork, which
// passes process.execArgv on): the child does not load bm2's reusePort
// preload, so it listens on process.env.PORT alone. The parent exits
// (non-zero) when the child does, as a supervisor would.
const { fork } = require("node:child_process");
if (process.argv[2] === "child") {
  require("node:http").createServer((req, res) => res.end("child\n")).listen(Number(process.env.PORT));
} else {
  const child = fork(__filename, ["child"]);
  child.on("exit", (code) => process.exit(code || 1));
  process.on("SIGTERM", () => {
    child.removeAllListeners("exit");
    child.kill();
    process.exit(0);
  });
}
