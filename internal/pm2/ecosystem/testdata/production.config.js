// import: --env production
// env_production carries the port, as many deploy guides write it.
module.exports = {
  apps: [{
    name: "web",
    script: "bin/www",
    instances: "max",
    exec_mode: "cluster",
    env: { NODE_ENV: "development", PORT: 3000 },
    env_production: { NODE_ENV: "production", PORT: 80 },
    env_staging: { NODE_ENV: "staging", PORT: 3001 },
    max_memory_restart: "1G",
    min_uptime: "10s",
    restart_delay: 4000,
    max_restarts: 10,
    node_args: "--max-old-space-size=4096 --enable-source-maps",
    args: "--color 'two words'",
  }],
};
