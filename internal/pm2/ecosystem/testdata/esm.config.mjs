// ESM: export default.
export default {
  apps: [{ name: "esm-app", script: "index.mjs", interpreter: "bun", env: { PORT: "7000" } }],
};
