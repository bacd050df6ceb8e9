// A webhook receiver that accepts every connection and never answers:
// appends one line per connection to the file named by OUT.
const net = require("node:net");
const fs = require("node:fs");
const held = [];
net.createServer((sock) => {
  held.push(sock);
  fs.appendFileSync(process.env.OUT, `connection ${held.length}\n`);
  sock.on("error", () => {});
}).listen(Number(process.env.PORT), "127.0.0.1");
