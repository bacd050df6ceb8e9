package preload

import (
	"path"

	"github.com/bm2dev/bm2/internal/config"
)

// FileName is the preload's name, beside bm2-probe.
const FileName = "reuseport.cjs"

// Path is the preload of the bm2-probe at helper, which sits beside it:
// /usr/lib/bm2/bm2-probe → /usr/lib/bm2/reuseport.cjs.
func Path(helper string) string {
	return path.Join(path.Dir(helper), FileName)
}

// Flag is the runtime's option that loads a module before the app's own
// code: Node.js's --require, Bun's --preload. Both take a CommonJS file,
// and both load it for an ES module app too.
func Flag(rt config.Runtime) string {
	if rt == config.Bun {
		return "--preload"
	}
	return "--require"
}

// Args are the runtime arguments that load file, to go just before the
// script (after runtime_args, where `bun run` would still come first).
func Args(rt config.Runtime, file string) []string {
	return []string{Flag(rt), file}
}
