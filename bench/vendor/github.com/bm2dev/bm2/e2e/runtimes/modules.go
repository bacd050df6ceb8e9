package runtimes

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bm2dev/bm2/internal/testutil"
)

// Frameworks are the npm packages the end-to-end tests build real apps
// with: Express 5 and Fastify 5 pass reusePort through to server.listen on
// Node.js 24.
var Frameworks = []string{"express@5", "fastify@5"}

// Modules returns a node_modules directory holding pkgs (npm specs such as
// "express@5"), installing them from the npm registry into the cache
// first if needed. Safe to call concurrently, also from several processes.
func Modules(ctx context.Context, pkgs ...string) (string, error) {
	sorted := append([]string(nil), pkgs...)
	sort.Strings(sorted)
	key := "npm-" + strings.NewReplacer("@", "-", "/", "-", "^", "", "~", "").Replace(strings.Join(sorted, "+"))
	cache := CacheDir()
	dest := filepath.Join(cache, key)
	mods := filepath.Join(dest, "node_modules")
	if st, err := os.Stat(mods); err == nil && st.IsDir() {
		return mods, nil
	}
	ready := func(dir string) bool {
		st, err := os.Stat(filepath.Join(dir, "node_modules"))
		return err == nil && st.IsDir()
	}
	err := testutil.FillCache(ctx, cache, key, ready, func(tmp string) (string, error) {
		dir := filepath.Join(tmp, "pkg")
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			return "", err
		}
		args := append([]string{"install", "--silent", "--no-save", "--no-package-lock", "--omit=dev", "--prefix", dir}, sorted...)
		install := exec.CommandContext(ctx, npm, args...)
		install.Dir = dir
		install.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
		if _, err := run(install); err != nil {
			return "", err
		}
		return dir, makePublic(dir)
	})
	if err != nil {
		return "", err
	}
	return mods, nil
}
