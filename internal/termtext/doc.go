// Package termtext makes text bm2 did not write itself (an app's output,
// journal fields, crash.log lines, names from /proc) safe to print on a
// terminal: every character a terminal could act on is shown as a
// visible escape instead, so that an app's output can neither clear the
// screen, set the clipboard (OSC 52), move the cursor, rewrite a line
// with a carriage return nor forge a line of bm2's own.
//
// One function decides ([Escape] and its forms): C0 controls but tab
// become \n, \r or \xHH (ESC is \x1b), DEL is \x7f, C1 controls are
// \u0080 to \u009f (the UTF-8 forms terminals also obey), the Unicode
// controls that reorder or break displayed text (bidi embeddings,
// overrides and isolates, U+2028, U+2029) are \uHHHH, and each byte that
// is not part of valid UTF-8 is \xHH. Everything else is kept, backslashes
// too: an app that prints the text "\x1b" shows the same, harmless, text.
//
// Machine output (--json) does not go through here: it keeps the exact
// bytes, escaped by JSON itself (see [JSON] for text that is not UTF-8).
package termtext
