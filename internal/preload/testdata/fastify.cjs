// Fastify 5: listen({ port, host }), twice, as two instances would.
"use strict";
const Fastify = require("fastify");
async function start() {
  const app = Fastify();
  app.get("/", async () => "ok");
  await app.listen({ port: Number(process.env.PORT), host: "0.0.0.0" });
}
(async () => {
  try {
    await start();
  } catch (e) {
    return done("first: " + e.code);
  }
  try {
    await start();
    done("both listening");
  } catch (e) {
    done("second: " + e.code);
  }
})();
function done(msg) {
  console.log(msg);
  process.exit(0);
}
