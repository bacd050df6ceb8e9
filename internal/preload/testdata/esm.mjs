// An ES module app: node:http's listen(port, host, cb), twice.
import http from "node:http";
const port = Number(process.env.PORT);
const listen = () =>
  new Promise((resolve) => {
    const s = http.createServer((req, res) => res.end("ok"));
    s.once("error", (e) => resolve(e.code));
    s.listen(port, "0.0.0.0", () => resolve("ok"));
  });
const first = await listen();
const second = first === "ok" ? await listen() : "";
console.log(first !== "ok" ? "first: " + first : second === "ok" ? "both listening" : "second: " + second);
process.exit(0);
