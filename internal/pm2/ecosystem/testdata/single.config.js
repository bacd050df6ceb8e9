// One app, the shape `pm2 init simple` writes, with the port in env.
module.exports = {
  apps: [{
    name: "api",
    script: "./dist/index.js",
    env: { PORT: 8080, NODE_ENV: "production" },
  }],
};
