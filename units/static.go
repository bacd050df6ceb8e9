package units

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Static returns the unit files shipped as they are, by file name.
func Static() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	return sub
}

// StaticFile returns one shipped unit file.
func StaticFile(name string) ([]byte, error) { return fs.ReadFile(Static(), name) }
