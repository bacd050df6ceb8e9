// Package ecosystem reads a PM2 ecosystem file or dump.pm2 into a
// convert.Source: the edge of bm2 import. Data (JSON, YAML, a dump) is
// parsed here; JavaScript (.js, .cjs, .mjs, and a .json or .json5 that
// PM2 would evaluate) is code from the app's repository, and is evaluated by a real
// Node.js (>= 24) in a child process that cannot hurt the host:
//
//   - It runs as the file's owner, never as root: bm2 import is run with
//     sudo, and the file is whoever wrote it's. A root-owned file is
//     evaluated as nobody. The owner could run the file themselves, so
//     running it as them gives it no power it did not have. (systemd-run
//     with DynamicUser= was the other choice: it would need a running
//     systemd, which bm2 import --dry-run does not, and a dynamic user
//     cannot read an app's 0600 .env in its owner's home, which ecosystem
//     files commonly load.)
//   - Node's permission model confines it further: --permission with
//     read access only, so the file can neither write a file, nor start a
//     process, nor load a native addon, nor start a worker.
//   - Its environment is a minimal one made here (PATH, HOME, LANG), never
//     bm2's; it has no standard input, its own session, a memory cap, and
//     a deadline after which its process group is killed; it dies with
//     bm2 (PR_SET_PDEATHSIG).
//   - It only loads the module (import(); CommonJS is compiled as
//     require compiles it), calls it when it exports a function, awaits
//     it when it is a promise, and writes the value as JSON on file
//     descriptor 3: what the file itself prints goes nowhere. Nothing
//     starts an app: the config is plain data, and no pm2 module is
//     needed.
//   - What runs is the bytes bm2 read (on file descriptor 4), never the
//     file looked up again, and the process starts in /: it enters the
//     file's directory itself when it may, so that relative paths and
//     the files it requires are found there, as under PM2. A directory
//     its user may not enter (a root-owned file in /root, in a mktemp -d:
//     nobody) does not stop it: it stays in /, its process.cwd() still
//     names the directory, and a file it would load from there cannot be
//     read, which its error then says. Its confinement is the same either
//     way.
package ecosystem
