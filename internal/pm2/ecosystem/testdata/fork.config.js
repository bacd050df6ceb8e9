// import: --mode fork
// A cluster app moved to fork mode: no reusePort needed.
module.exports = {
  apps: [{ name: "api", script: "app.js", instances: 3, exec_mode: "cluster", env: { PORT: 5000 } }],
};
