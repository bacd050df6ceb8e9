// A Fastify 5 app on Node.js 24 in cluster mode: reusePort passed through
// to server.listen.
const fastify = require("fastify")();
fastify.get("/", async () => `fastify ${process.env.BM2_APP_INSTANCE}\n`);
fastify.listen({ port: Number(process.env.BM2_APP_PORT), host: "0.0.0.0", reusePort: true }).then(() =>
  console.log(`fastify listening on ${process.env.BM2_APP_PORT}`));
process.on("SIGTERM", () => fastify.close());
