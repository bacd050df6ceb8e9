// Package guess is what bm2 guesses of an app from its directory, for
// `bm2 init` and `bm2 start app.js`: its name, its script, its runtime,
// its port and who supplies reusePort, and its [env], each with where it
// came from (Make, rendered as a commented bm2.toml by TOML); the port a
// script falls back to (ScriptPort) and the name PM2 would give it
// (ScriptName); the account to write as user when the project's own
// could not enter the directory (DirUser).
//
// Everything in the directory is data: package.json is read as JSON (at
// most 1 MiB), the code is read as text and matched with regular
// expressions (one scanner, code.scan, for both commands), nothing is
// run, and no symbolic link inside the directory is followed (run by
// root in a user's directory, a link could point anywhere).
package guess

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

const (
	// maxRead bounds every file bm2 init reads: package.json and
	// each source file.
	maxRead = 1 << 20
	// maxFiles bounds the source files read: the entry file and the
	// files it imports (relative imports, two levels down).
	maxFiles = 16
	maxDepth = 2
	// defaultPort is the port written when the app listens on one the
	// code does not name.
	defaultPort = 3000
)

// ScriptExts are the files `bm2 start FILE` runs as a script.
var ScriptExts = []string{".js", ".cjs", ".mjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"}

// IsScript tells whether file has one of ScriptExts.
func IsScript(file string) bool {
	ext := strings.ToLower(filepath.Ext(file))
	for _, e := range ScriptExts {
		if ext == e {
			return true
		}
	}
	return false
}

// nameRE is what is not allowed in a project's name.
var nameRE = regexp.MustCompile(`[^a-z0-9_-]+`)

// ScriptName is a project's name from a script's file name, as PM2 names
// an app after its script: lower case, other characters as "-".
func ScriptName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	n := strings.Trim(nameRE.ReplaceAllString(strings.ToLower(base), "-"), "-_")
	if n == "" {
		n = "app"
	}
	return n
}

// ScriptPort is the port a script falls back to when PORT is not set
// (`process.env.PORT || 3000`, or ??), and the words that say so: what
// the scanner of bm2 init finds in at most 1 MiB of the script alone.
// 0 when it names none.
func ScriptPort(script string) (int, string) {
	f, err := os.Open(script)
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	buf := make([]byte, maxRead)
	n, _ := f.Read(buf)
	var c code
	c.scan(filepath.Base(script), buf[:n])
	if c.port == 0 || c.portVar != "PORT" {
		return 0, ""
	}
	return c.port, c.portText
}
