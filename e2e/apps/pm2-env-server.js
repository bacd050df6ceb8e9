// Answers with its port and the variables the test compares.
const http = require("node:http");
const port = Number(process.env.PORT);
const names = ["PORT", "NODE_ENV", "API_KEY", "GREETING", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY"];
http.createServer((req, res) => {
  const env = {};
  for (const n of names) if (process.env[n] !== undefined) env[n] = process.env[n];
  res.end(JSON.stringify({ port, env }) + "\n");
}).listen({ port, reusePort: true });
