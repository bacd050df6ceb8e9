// Package top is bm2 top: a live view of the projects and their
// instances, read again every second, in a terminal.
//
// bm2 has no daemon to ask for figures, so bm2 top reads the host the way
// bm2 list does, over and over: each reading is a [Frame], a
// view.Snapshot (systemd's view of every instance, the errored marks,
// the reusePort verdicts) and its view.Figures (connections, accept
// queues), taken at one time. The CPU column is what two frames say
// together: the CPU time an instance used between them over the wall
// clock between them, 100% being one CPU. With one frame, or a counter
// systemd does not know, or a run that restarted in between (its counter
// began again), it is "-": every figure not known is "-", never a zero.
//
// # Shape
//
// [Model] is a bubbletea model and this package's pure core: its View is a
// pure function of the last two frames, the selected project, the
// terminal's size and the mode (the table, the reload prompt, the log
// pane), and its Update changes only those. Everything that reaches the
// host is a callback of [Config] the caller fills (package cli): Frames
// reads a frame, Reload runs bm2 reload with its output captured, Logs
// reads a project's last log lines as bm2 logs -n does. Each runs as a
// tea.Cmd, off the terminal's goroutine. A tick every second asks for a
// frame, unless one is still being read: a slow systemd never has two
// readings in flight.
//
// What the instance's state, reason and verdict are is decided once, by
// view.Snapshot.Instance, which bm2 list and bm2 status render too.
//
// # The table
//
// One row per instance (one for a project whose file is invalid), in the
// columns of the column table (columns.go). When the terminal is too
// narrow for all of them, columns are dropped in a fixed order, the least
// telling first (REASON, RESTARTS, QUEUE, CONNS, UPTIME, REUSEPORT, MEM,
// CPU%); PROJECT, ID and STATE stay, and no line is ever wider than the
// terminal. Rows beyond its height scroll with the selection: the selected
// project's rows are kept in view. A new column (an HTTP health check's,
// say, once bm2 has them) is one more entry of the table, with the rank
// it is dropped at and the function that renders its cell.
//
// # What reaches the terminal
//
// Everything an app can have written, or bm2 did not write itself (log
// lines, reasons, project names, the reload's output, warnings), is
// escaped through package termtext before it is laid out: an app that
// logs an escape sequence shows it as text ("\x1b[2J"), and it never
// reaches the terminal raw. The reload's own output never goes to the
// terminal under the view either: the callback captures it, and the view
// shows its outcome on the status line.
package top
