package runtimes

import (
	"context"
	"fmt"
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
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("create cache: %w", err)
	}
	unlock, err := testutil.LockFile(ctx, filepath.Join(cache, "."+key+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if st, err := os.Stat(mods); err == nil && st.IsDir() {
		return mods, nil
	}
	tmp, err := os.MkdirTemp(cache, ".fetch-"+key+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", err
	}
	args := append([]string{"install", "--silent", "--no-save", "--no-package-lock", "--omit=dev", "--prefix", tmp}, sorted...)
	install := exec.CommandContext(ctx, npm, args...)
	install.Dir = tmp
	install.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	if _, err := run(install); err != nil {
		return "", err
	}
	if err := makePublic(tmp); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	os.RemoveAll(dest)
	if err := os.Rename(tmp, dest); err != nil {
		return "", fmt.Errorf("move into cache: %w", err)
	}
	return mods, nil
}
