// Cluster-mode test app: Bun.serve with reusePort, answers with its instance.
const port = Number(process.env.BM2_APP_PORT);
Bun.serve({
  port,
  reusePort: true,
  fetch: () => new Response(`${process.env.BM2_APP_NAME} ${process.env.BM2_APP_INSTANCE} ${process.pid}\n`),
});
