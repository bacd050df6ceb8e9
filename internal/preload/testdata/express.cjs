// Express 5 as an app written for PM2 listens: on process.env.PORT (a
// string), or 3000. Twice, as two instances would.
"use strict";
const express = require("express");
const app = express();
app.get("/", (req, res) => res.send("ok"));
const port = process.env.PORT || 3000;
app.listen(port, (err) => {
  if (err) return done("first: " + err.code);
  app.listen(port, (err) => done(err ? "second: " + err.code : "both listening"));
});
function done(msg) {
  console.log(msg);
  process.exit(0);
}
