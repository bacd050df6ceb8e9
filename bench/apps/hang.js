// A webhook receiver that accepts every connection and never answers: the
// stop and crash figures measure whether bm2 waits for its notifications.
// Port: $PORT (127.0.0.1 only).
const net = require("node:net");
const held = [];
net.createServer((sock) => {
  held.push(sock);
  sock.on("error", () => {});
}).listen(Number(process.env.PORT), "127.0.0.1", () => console.log(`hanging receiver on ${process.env.PORT}`));
