// Test app for Node.js for SyslogLevelPrefix: at every start it prints a
// line with the emerg prefix, one with the err prefix and a plain line,
// then listens. With the prefixes off (bm2's default) all three are
// logged at info, as written; with log_level_prefix = true the project
// sets PREFIX_SAFE=1 in [env], and the app leaves out the emerg line
// (journald would wall it to every terminal).
const http = require("node:http");

if (process.env.PREFIX_SAFE !== "1") process.stdout.write("<0>panic\n");
process.stdout.write("<3>not an error\n");
process.stdout.write("a normal line\n");
http.createServer((req, res) => res.end("ok\n")).listen(Number(process.env.BM2_APP_PORT), () => console.log("prefix-listening"));
