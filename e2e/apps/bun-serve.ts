// A Bun app that calls Bun.serve without reusePort, on process.env.PORT.
Bun.serve({ port: Number(process.env.PORT), fetch: () => new Response(`bun ${process.pid}\n`) });
