// Test app for Node.js for a journal flood: it listens, then writes lines
// to stdout as fast as journald takes them for STORM_SECONDS (default 3),
// each with a level prefix of its own (<3> err, <4> warning, <6> info,
// which log_level_prefix = true lets through), so that every priority's
// rate limit of its unit is spent; then it says how many it wrote and
// exits with status 3: a crash, whose instance_crashed bm2 logs while
// the unit's rate limit is spent.
const http = require("node:http");

const seconds = Number(process.env.STORM_SECONDS || "3");
const lines = [];
for (let i = 0; i < 1000; i++) lines.push(`<${[3, 4, 6][i % 3]}>storm line ${i}`);
const block = lines.join("\n") + "\n";

http.createServer((req, res) => res.end("ok\n")).listen(Number(process.env.BM2_APP_PORT), () => {
  const start = Date.now();
  const end = start + seconds * 1000;
  let n = 0;
  const pump = () => {
    while (Date.now() < end) {
      n += 1000;
      if (!process.stdout.write(block)) {
        process.stdout.once("drain", pump);
        return;
      }
    }
    const rate = Math.round(n / ((Date.now() - start) / 1000));
    process.stdout.write(`<6>storm done: ${n} lines, ${rate} lines/s\n`, () => process.exit(3));
  };
  pump();
});
