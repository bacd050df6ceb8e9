package config

import (
	"os"
	"path/filepath"
	"testing"
)

// DiscoverOne finds the first file of the name along the path, as Discover
// does: a later one is shadowed, a mask there hides the project, and a
// broken file of another name is no concern of it.
func TestDiscoverOne(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(dir, name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(b, "api.toml", "name = \"api\"\n")
	write(a, "web.toml", "name = \"web\"\n")
	write(b, "web.toml", "name = \"shadowed\"\n")
	write(a, "other.toml", "garbage")
	if src, ok := DiscoverOne([]string{a, b}, "api"); !ok || src.Path != filepath.Join(b, "api.toml") {
		t.Errorf("api: %+v %v", src, ok)
	}
	if src, ok := DiscoverOne([]string{a, b}, "web"); !ok || string(src.Data) != "name = \"web\"\n" {
		t.Errorf("web: %+v %v", src, ok)
	}
	write(a, "api.toml", "") // an empty file masks it
	if _, ok := DiscoverOne([]string{a, b}, "api"); ok {
		t.Error("a masked project was found")
	}
	if _, ok := DiscoverOne([]string{a, b}, "nope"); ok {
		t.Error("found a project that has no file")
	}
}
