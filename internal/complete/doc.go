// Package complete is what `bm2 __complete` offers for the word being
// typed, the last of a bm2 command line: commands, flags and their
// values, and the arguments the command's usage line names.
//
// What each argument takes is read from the command's usage line in
// help.txt ("<name | name-i>": projects and instances; "<dir | file>":
// file names, which the shell lists itself), so that --help, bm2(1) and
// completion cannot disagree. Package cli hands [Candidates] its command
// table as a [Line] and prints what comes back, one candidate a line; the
// shell scripts that call it stay in cli.
//
// Nothing here reaches the host but through [Line.Entries], the projects
// on the search path as bm2 list reads them (no systemd needed).
package complete
