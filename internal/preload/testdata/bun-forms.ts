// Bun.serve's forms, and node:http's listen under Bun: for each, what
// Bun.serve received (from spy.cjs) and whether a second server started
// the same way could join the first's port. One JSON line per form.
//   TEST_PORT, OTHER_PORT, SOCKET_DIR   as for forms.cjs
//   PORT                                the instance's port (port_env)
import http from "node:http";
import path from "node:path";

const P = Number(process.env.TEST_PORT);
const Q = Number(process.env.OTHER_PORT);
const dir = process.env.SOCKET_DIR!;
const fetch = () => new Response("ok");

// An app object whose fetch is a method of its class.
class App {
  port = P;
  fetch() {
    return new Response("ok");
  }
}

const forms: [string, () => any, boolean][] = [
  ["Bun.serve({ port })", () => ({ port: P, fetch }), true],
  ["Bun.serve({ port as string })", () => ({ port: String(P), fetch }), true],
  ["Bun.serve({ hostname, port })", () => ({ hostname: "0.0.0.0", port: P, fetch }), true],
  ["Bun.serve({}), port from $PORT", () => ({ fetch }), true],
  ["Bun.serve({}), port from $BUN_PORT", () => ((process.env.BUN_PORT = String(Q)), { fetch }), true],
  ["Bun.serve(class instance)", () => new App(), true],
  ["Bun.serve({ reusePort: true })", () => ({ port: P, reusePort: true, fetch }), true],
  ["Bun.serve({ reusePort: false })", () => ({ port: P, reusePort: false, fetch }), true],
  ["Bun.serve({ other port })", () => ({ port: Q, fetch }), true],
  ["Bun.serve({ port: 0 })", () => ({ port: 0, fetch }), false],
  ["Bun.serve({ unix })", () => ({ unix: path.join(dir, "a.sock"), fetch }), false],
];

function serve(options: any) {
  const before = (globalThis as any).received.length;
  let result = "ok";
  let server: any;
  try {
    server = Bun.serve(options);
  } catch (e: any) {
    result = e.code || e.message;
  }
  return { server, result, got: (globalThis as any).received.slice(before) };
}

for (const [name, make, twice] of forms) {
  const options = make();
  const first = serve(options);
  const line: any = {
    name,
    same: first.got.length === 1 && first.got[0].args[0] === options,
    got: first.got.length === 1 ? first.got[0].shown : null,
    first: first.result,
  };
  let second: any;
  if (twice && first.result === "ok") {
    second = serve(make());
    line.second = second.result;
    if (second.result === "ok") line.answers = await (await globalThis.fetch(`http://127.0.0.1:${P}/`)).text();
  }
  console.log(JSON.stringify(line));
  for (const s of [first, second]) s?.server?.stop(true);
  delete process.env.BUN_PORT;
}

// node:http on Bun: reusePort is asked for and not given.
const listen = () =>
  new Promise<any>((resolve) => {
    const s = http.createServer((req, res) => res.end("ok"));
    s.once("error", (e: any) => resolve({ s, r: e.code }));
    s.listen({ port: P, reusePort: true }, () => resolve({ s, r: "ok" }));
  });
const a = await listen();
const b = await listen();
console.log(JSON.stringify({ name: "node:http listen({ port, reusePort: true })", first: a.r, second: b.r }));
process.exit(0);
