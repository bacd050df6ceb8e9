// Test app for Node.js that prints what takes over a terminal: clear the
// screen, set the clipboard (OSC 52), rewrite the line (CR), a C1 CSI as
// UTF-8 and as a raw byte, bytes that are not UTF-8. With CRASH=1 it
// exits 1 right after, without listening.
const http = require("node:http");

process.stdout.write("term-start \x1b[2J\x1b]52;c;cHduZWQ=\x07ok\rFAKE \u009b31m end\n");
process.stdout.write(Buffer.concat([Buffer.from("term-bytes "), Buffer.from([0xff, 0x9b]), Buffer.from(" end\n")]));
if (process.env.CRASH === "1") {
  process.exit(1);
}
http.createServer((req, res) => res.end("ok\n")).listen(Number(process.env.BM2_APP_PORT), () => console.log("term-listening"));
