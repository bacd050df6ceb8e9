// Package envfile reads environment files the way systemd's
// EnvironmentFile= does (systemd 252's parser, load_env_file), so that an
// app's env_file means under bm2 exactly what it would mean to systemd:
//
//	# comment            ; comment too
//	KEY=value            trailing whitespace removed, \ escapes the next character
//	KEY="a \"b\" $c"     double quotes: \ escapes " \ ` $ and a newline; other
//	                     backslashes stay; newlines are kept
//	KEY='it is'          single quotes: everything literal up to the next '
//	KEY                  (no "=") ignored
//
// Nothing is expanded. Assignments whose name is not a valid variable name
// ([A-Za-z_][A-Za-z0-9_]*) or whose value is not valid UTF-8 are dropped,
// as systemd drops them; a later assignment of a name replaces an earlier
// one.
//
// bm2 does not let PID 1 read an app's env_file: PID 1 reads as root and
// follows symlinks. The run wrapper reads it as the app's user instead,
// with this package.
package envfile
