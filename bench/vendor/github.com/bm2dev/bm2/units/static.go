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

//go:embed user
var user embed.FS

// UserStatic returns the unit files shipped for users' managers
// (/usr/lib/systemd/user), by file name.
func UserStatic() fs.FS {
	sub, err := fs.Sub(user, "user")
	if err != nil {
		panic(err)
	}
	return sub
}

// StaticFile returns one shipped unit file.
func StaticFile(name string) ([]byte, error) { return fs.ReadFile(Static(), name) }
