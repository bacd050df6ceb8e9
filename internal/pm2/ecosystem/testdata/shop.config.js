// import: --env production
module.exports = {
  apps: [
    {
      name: "shop",
      script: "server.js",
      instances: 2,
      exec_mode: "cluster",
      max_memory_restart: "300M",
      kill_timeout: 3000,
      env: { PORT: 3100, NODE_ENV: "development", GREETING: "hello" },
      env_production: { NODE_ENV: "production", API_KEY: "s3cret" },
    },
    {
      name: "jobs",
      script: "server.js",
      instances: 2,
      increment_var: "PORT",
      env: { PORT: 3200 },
      cron_restart: "0 3 * * *",
    },
  ],
};
