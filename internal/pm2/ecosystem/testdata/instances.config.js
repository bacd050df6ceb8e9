// instances as public projects write it: "max", 0, "2", -1, and a number.
const common = { script: "server.js", exec_mode: "cluster" };
module.exports = {
  apps: [
    { ...common, name: "max", instances: "max", env: { PORT: 4000 } },
    { ...common, name: "zero", instances: 0, env: { PORT: 4001 } },
    { ...common, name: "two", instances: "2", env: { PORT: 4002 } },
    { ...common, name: "all-but-one", instances: -1, env: { PORT: 4003 } },
    { name: "four-fork", script: "server.js", instances: 4, exec_mode: "fork_mode", env: { PORT: 4010 } },
  ],
};
