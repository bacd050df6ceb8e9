package cli

import (
	"fmt"

	"github.com/bm2dev/bm2/internal/buildinfo"
)

// Version is `bm2 version`.
func (a *App) Version() error {
	v, goVersion := buildinfo.Version()
	if goVersion != "" {
		fmt.Fprintf(a.Out, "bm2 %s (%s)\n", v, goVersion)
	} else {
		fmt.Fprintf(a.Out, "bm2 %s\n", v)
	}
	return nil
}
