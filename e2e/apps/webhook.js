// A local webhook receiver for tests: appends every request as one JSON line
// ({"method","url","body"}) to the file named by OUT, answers 204. It
// listens on PORT of HOST (default 127.0.0.1).
const http = require("node:http");
const fs = require("node:fs");
http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    fs.appendFileSync(process.env.OUT, JSON.stringify({ method: req.method, url: req.url, body }) + "\n");
    res.statusCode = 204;
    res.end();
  });
}).listen(Number(process.env.PORT), process.env.HOST || "127.0.0.1");
