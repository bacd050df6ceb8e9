// A function that returns the config (some projects compute it).
module.exports = () => ({
  apps: ["a", "b"].map((n, i) => ({ name: "svc-" + n, script: "svc.js", env: { NODE_PORT: 6000 + i } })),
});
