// Test app for Node.js for the journal's rate limit: at every start it
// prints FLOOD_LINES lines at once, listens, and 2.5 s later prints
// "flood-after": the first line of a new rate-limit interval, which makes
// journald report how many lines of the last one it dropped.
const http = require("node:http");

const n = Number(process.env.FLOOD_LINES || "5000");
let out = "";
for (let i = 0; i < n; i++) out += `flood ${i}\n`;
process.stdout.write(out);
http.createServer((req, res) => res.end("ok\n")).listen(Number(process.env.BM2_APP_PORT));
setTimeout(() => console.log("flood-after"), 2500);
