// Bun's own server from a default export, on $BM2_APP_PORT; then whether
// a server with reusePort: true can join its port.
export default { port: Number(process.env.BM2_APP_PORT), fetch: () => new Response("ok") };
setTimeout(() => {
  try {
    Bun.serve({ port: Number(process.env.BM2_APP_PORT), reusePort: true, fetch: () => new Response("joined") });
    console.log("joined");
  } catch (e: any) {
    console.log("exclusive: " + e.code);
  }
  process.exit(0);
}, 200);
