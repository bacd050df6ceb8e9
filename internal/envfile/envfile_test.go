package envfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := "# comment\n; also\nPLAIN=value  \nSPACED = x y \nDQ=\"say \\\"hi\\\" \\$HOME \\n\n second\"\nSQ='it''s $x'\n" +
		"ESC=a\\ b\\\ncontinued\nNOEQ\nbad-name=1\nLAST=1\nLAST=2\nEMPTY=\n  INDENT=ok\nEND=\"unterminated"
	got := Parse([]byte(in))
	want := []Var{
		{"PLAIN", "value"},
		{"SPACED", "x y"},
		{"DQ", "say \"hi\" $HOME \\n\n second"},
		{"SQ", "its $x"},
		{"ESC", "a bcontinued"},
		{"LAST", "2"},
		{"EMPTY", ""},
		{"INDENT", "ok"},
		{"END", "unterminated"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestInvalidUTF8Dropped(t *testing.T) {
	if got := Parse([]byte("A=\xff\nB=ok\n")); len(got) != 1 || got[0].Name != "B" {
		t.Fatalf("%q", got)
	}
}

// What the generator writes with units.QuoteEnvFile comes back exactly
// (tested there, against this parser, for arbitrary values).
func FuzzParse(f *testing.F) {
	f.Add([]byte("A=1\nB=\"x\\\"y\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range Parse(data) {
			if !validName(v.Name) {
				t.Fatalf("invalid name %q", v.Name)
			}
		}
	})
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	me := os.Getuid()
	env := filepath.Join(dir, ".env")
	os.WriteFile(env, []byte("A=1\n"), 0o600)
	if vs, err := Read(env, dir, me); err != nil || len(vs) != 1 {
		t.Fatalf("%v %v", vs, err)
	}
	secret := filepath.Join(t.TempDir(), "other.toml")
	os.WriteFile(secret, []byte("name = \"other\"\nTOKEN=stolen\n"), 0o644)
	link := filepath.Join(dir, "link.env")
	os.Symlink(secret, link)
	if _, err := Read(link, dir, me); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("followed a symlink: %v", err)
	}
	// A symlinked directory on the way, below the app's directory.
	os.Symlink(filepath.Dir(secret), filepath.Join(dir, "conf"))
	if _, err := Read(filepath.Join(dir, "conf", "other.toml"), dir, me); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("followed a symlinked directory: %v", err)
	}
	// Outside the app's directory only the last component is checked.
	if _, err := Read(secret, dir, me); err != nil {
		t.Fatalf("absolute env_file elsewhere: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "none"), dir, me); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	if _, err := Read(filepath.Join(dir, "d"), dir, me); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatal(err)
	}
	if _, err := Read(env, dir, me+1); me != 0 && (err == nil || !strings.Contains(err.Error(), "neither root nor the app's user")) {
		t.Fatalf("someone else's file: %v", err)
	}
	if me == 0 {
		os.Chown(env, 1234, 1234)
		if _, err := Read(env, dir, 5678); err == nil || !strings.Contains(err.Error(), "owned by uid 1234, neither root nor the app's user (uid 5678)") {
			t.Fatalf("someone else's file: %v", err)
		}
		if _, err := Read(env, dir, 1234); err != nil {
			t.Fatalf("the app's own file: %v", err)
		}
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, MaxSize+1), 0o600)
	if _, err := Read(big, dir, me); err == nil {
		t.Fatal("read a file past MaxSize")
	}
}
