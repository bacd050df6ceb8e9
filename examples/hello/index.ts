// A minimal bm2 cluster-mode app: every instance listens on the same port
// with reusePort, and the kernel spreads connections across them.
const port = Number(process.env.BM2_APP_PORT ?? 3000);
const instance = process.env.BM2_APP_INSTANCE ?? "?";

Bun.serve({
  port,
  reusePort: true,
  fetch: () => new Response(`hello from instance ${instance} (pid ${process.pid})\n`),
});

console.log(`instance ${instance} listening on port ${port}`);
