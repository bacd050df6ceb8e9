// Test app for Node.js for bm2 logs --json and --grep: at every start it
// prints a plain line, a line with an ESC sequence, a line that is not
// UTF-8 and a line on stderr, then listens.
const http = require("node:http");

process.stdout.write("hello plain\n");
process.stdout.write("hello \x1b[31mred\x1b[0m\n");
process.stdout.write(Buffer.concat([Buffer.from("bytes "), Buffer.from([0xff, 0xfe]), Buffer.from(" end\n")]));
process.stderr.write("to stderr\n");
http.createServer((req, res) => res.end("ok\n")).listen(Number(process.env.BM2_APP_PORT), () => console.log("lines-listening"));
