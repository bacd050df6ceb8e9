// Package gateway prints the configuration of a gateway in front of bm2
// projects: an nginx conf.d snippet ([Nginx]) or a Caddyfile site block
// ([Caddy]).
//
// Every bm2 project ends at a gateway. In cluster mode the instances share
// one port with SO_REUSEPORT and the kernel spreads new connections over
// them, so the gateway needs one upstream line per host: more lines would
// only split what the kernel already balances. In fork mode instance i
// listens on port+i, so the gateway needs one line per instance, and it is
// the gateway that balances.
//
// Like the generator, the package is a pure function: projects and
// [Options] in, bytes out, no I/O, no clock, no map iteration, so the same
// input gives the same bytes and a gateway's configuration can be diffed
// in review and in CI. The `bm2 gateway` command (package cli) is the edge
// that reads the project files and writes the result.
//
// # What the output bakes in
//
// The three things a hand-written proxy configuration gets wrong: upstream
// keep-alive (keepalive, proxy_http_version 1.1 and a cleared Connection
// header; without them every request pays for a new TCP handshake to the
// app), the forwarding headers (Host, X-Real-IP, X-Forwarded-For,
// X-Forwarded-Proto), and retries that match how `bm2 reload` works.
//
// A reload restarts the instances one at a time, each back in about 0.3 to
// 1 s. In cluster mode the port never loses its listeners (the surge
// instance serves beside the others), so a connection always finds an
// instance. In fork mode the restarting instance's port is dark for that
// time: its connections are refused, and the gateway must pass the request
// to another instance. nginx's passive health check gets this wrong by
// default: max_fails=1 fail_timeout=10s marks every restarted instance down
// for 10 s, the reload restarts all of them within a few seconds, and the
// upstream runs out of live servers ("no live upstreams", 502) although
// every instance but one is serving. Measured behind a hand-written nginx,
// a reload of a 3-instance fork project turned 231,086 of 255,433 requests
// into 502s. nginx counts fail_timeout in whole seconds, and the next
// instance goes down a few milliseconds after the previous one is back,
// so no fail_timeout is short enough to keep two marks from overlapping.
// Hence:
//
//   - On one host (no [Options.Hosts]), every server line has max_fails=0:
//     nginx never marks an instance down. A connection to a port that is
//     dark is refused at once (a reset on loopback, no wait), and
//     proxy_next_upstream error timeout passes the request to the next
//     server; the cost is one refused connect per request that round robin
//     hands to the restarting instance, for under a second.
//   - Over several hosts, a host may also vanish without refusing
//     anything (powered off, cut off), and then every connect to it waits
//     for proxy_connect_timeout. There each server line has max_fails=3
//     fail_timeout=2s, so a host that stopped answering is skipped after
//     three failures (one error on a reused keep-alive connection that an
//     app closed as it stopped is not a dead host) and tried again every
//     2 s; and every server is listed a second time as a backup with
//     max_fails=0, which nginx never marks down. Marks then only ever
//     steer requests: when every primary server is marked, nginx goes on
//     to the backups and proxy_next_upstream walks them to one that
//     answers, instead of answering 502.
//   - proxy_connect_timeout 2s: long enough for one retransmitted SYN
//     (the first retransmission comes after 1 s, when an accept queue
//     overflowed), short enough that a host that does not answer costs a
//     request 2 s rather than nginx's default 60 s before it moves on.
//   - proxy_next_upstream_tries 0: no limit but the number of servers, so
//     a request tries every server before it fails.
//   - keepalive_timeout 4s on the upstream: nginx closes an idle
//     connection before the app does (Node.js closes idle keep-alive
//     connections after 5 s, Bun after 10 s), so nginx never sends a
//     request on a connection the app is closing.
//
// Caddy has no such trap: when every upstream is marked unhealthy it keeps
// choosing, every lb_try_interval, until lb_try_duration ends. Its block
// uses round robin, lb_try_duration 5s and lb_try_interval 100ms (a refused
// connection costs that request 100 ms, then it goes to the next
// instance), dial_timeout 2s and keepalive 4s for the same reasons as
// above, and over several hosts passive health checks (fail_duration 2s,
// max_fails 3), shorter than lb_try_duration, so a request that finds
// every upstream marked waits for the first mark to expire rather than
// failing.
//
// # Safety
//
// Every value that reaches the output is checked against a character set
// that cannot end a directive, open or close a block, start a comment or a
// variable, or break a line: project names, ports, host addresses, server
// names, the listen address and path prefixes. A value outside it is an
// error that names the value; nothing is ever quoted into the output.
//
// # Fleets
//
// A fleet is the same project file on every host and a gateway over them:
// [Options.Hosts] lists the hosts, and every upstream line is repeated for
// each of them. Nothing new runs on the hosts: each is an ordinary bm2
// host, and `bm2 stop` or `bm2 reload` on one of them loses no request
// behind the gateway.
package gateway
