// What cannot be imported is refused app by app; the rest is imported.
module.exports = {
  apps: [
    { script: "anonymous.js", env: { PORT: 1 } },
    { name: "next", script: "yarn", args: "start", env: { PORT: 3000 } },
    { name: "py", script: "app.py", interpreter: "python3", env: { PORT: 3001 } },
    { name: "noport", script: "index.js" },
    { name: "twoports", script: "index.js", env: { PORT: 3002, NODE_PORT: 3003 } },
    { name: "socket", script: "index.js", env: { PORT: "/run/app.sock" } },
    { name: "binary", script: "./server", interpreter: "none", env: { PORT: 3004 } },
    {
      name: "kept", script: "index.js", env: { PORT: 443, BM2_APP_PORT: "x", "bad-name": "y" },
      instance_var: "INSTANCE_ID", increment_var: "WORKER_ID", pid_file: "/tmp/kept.pid",
      wait_ready: true, listen_timeout: 8000, shutdown_with_message: true, treekill: false,
      namespace: "shop", vizion: false, pmx: false, stop_exit_codes: [0], time: true,
      source_map_support: true, filter_env: ["SECRET_"], autostart: false, made_up: 1,
    },
  ],
  deploy: { production: { user: "deploy" } },
};
