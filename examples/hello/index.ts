// A minimal bm2 cluster-mode app: every instance listens on the same port
// with reusePort, and the kernel spreads connections across them.
const port = Number(process.env.BM2_APP_PORT ?? 3000);
const instance = process.env.BM2_APP_INSTANCE ?? "?";
let closing = false;

const server = Bun.serve({
  port,
  reusePort: true,
  fetch: () =>
    new Response(`hello from instance ${instance} (pid ${process.pid})\n`,
      closing ? { headers: { connection: "close" } } : undefined),
});

console.log(`instance ${instance} listening on port ${port}`);

// On SIGTERM (bm2 stop, bm2 reload) the other instances keep the port: say
// "Connection: close" from now on so keep-alive clients reconnect to them,
// then stop a moment later (stop() closes idle connections at once, which
// would race requests already on their way).
process.on("SIGTERM", () => {
  closing = true;
  setTimeout(() => server.stop(), 300);
});
