// A Bun.serve app (reusePort) that keeps state in its StateDirectory=:
// GET /state appends a line to $STATE_DIRECTORY/hits and returns the count.
import { appendFileSync, readFileSync } from "node:fs";

const file = `${process.env.STATE_DIRECTORY}/hits`;
Bun.serve({
  port: Number(process.env.BM2_APP_PORT),
  reusePort: true,
  fetch(req) {
    if (new URL(req.url).pathname === "/state") {
      appendFileSync(file, "hit\n");
      return new Response(String(readFileSync(file, "utf8").split("\n").length - 1) + "\n");
    }
    return new Response(`bun ${process.env.BM2_APP_INSTANCE}\n`);
  },
});
console.log(`bun listening on ${process.env.BM2_APP_PORT}`);
