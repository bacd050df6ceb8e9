// Test app for Node.js, the neighbour of a journal flood: it listens and
// prints "calm <n>" every 50 ms, n counting from 0 at every start.
const http = require("node:http");

let n = 0;
http.createServer((req, res) => res.end("ok\n")).listen(Number(process.env.BM2_APP_PORT), () => {
  setInterval(() => console.log(`calm ${n++}`), 50);
});
