// Package trust decides what a file that root acts on may ask root for.
//
// A project file, an ecosystem file or a dump that root did not write
// speaks only for the user who could have written it (SPEC §13): when root
// runs `bm2 check`, `bm2 serve` or `bm2 import` on it, it may ask for that
// user's account (with that user's own groups) or the project's own
// account, and nothing more. [Read] reads such a file once, from a file
// descriptor, walking its path without following a link that someone
// other than root could swap, and says who could have written what it
// read (its [File.Speaker]); [Check] is the one policy: given the
// project the file describes and who speaks for it, it lists what root
// refuses to do on its word, each with the file, the key, its line and the
// fix, and turns wants and requires into ordering only. Root's own files,
// and a file the operator vouches for on the command line (--trust-file),
// are not checked.
package trust
