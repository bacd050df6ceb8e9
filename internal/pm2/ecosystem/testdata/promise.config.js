// An async function: the config is awaited.
module.exports = async () => {
  await new Promise((r) => setTimeout(r, 10));
  return { apps: [{ name: "later", script: "main.js", port: 9000, user: "www-data" }] };
};
