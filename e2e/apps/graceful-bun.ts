// Test app for Bun: Bun.serve with reusePort on $BM2_APP_PORT. On SIGTERM it
// answers "Connection: close" from then on, so that keep-alive clients
// finish their request and reconnect (to another instance), and stops a
// moment later: Bun's server.stop() closes idle keep-alive connections at
// once, which would race requests already on their way.
const env = process.env;
let closing = false;
const server = Bun.serve({
  port: Number(env.BM2_APP_PORT),
  reusePort: true,
  fetch: () =>
    new Response(`${env.BM2_APP_NAME} ${env.BM2_APP_INSTANCE} ${process.pid}\n`,
      closing ? { headers: { connection: "close" } } : undefined),
});
console.log(`instance ${env.BM2_APP_INSTANCE} listening on ${server.port}`);
process.on("SIGTERM", () => {
  console.log(`instance ${env.BM2_APP_INSTANCE} closing`);
  closing = true;
  setTimeout(() => server.stop(), 300);
});
