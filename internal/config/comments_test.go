package config

import "testing"

func TestHasOwnComments(t *testing.T) {
	p, _ := Parse("/etc/bm2/api.toml", []byte("name = \"api\"\nscript = \"a.js\"\ncwd = \"/srv/api\"\nport = 3000\n[env]\nA = \"1\"\n"), Options{NumCPU: 2})
	if p == nil {
		t.Fatal("fixture does not parse")
	}
	pub, priv := Marshal(p)
	for _, tc := range []struct {
		data string
		want bool
	}{
		{string(pub), false},  // bm2's header is bm2's
		{string(priv), false}, // and so is the private part's
		{"name = \"api\"\nport = 3000\n", false},
		{"# mine\nname = \"api\"\n", true},
		{string(pub) + "# added\n", true},
		{"port = 3000 # the public one\n", true},
		{"  # indented\nport = 3000\n", true},
		{"name = \"a#b\"\n", false},
		{"name = 'a#b'\n", false},
		{"name = \"a\\\"#b\"\n", false},
		{"\"key#1\" = 1\n", false},
		{"args = [\"--x=#1\", '#2']\n", false},
		{"s = \"\"\"\nline # not a comment\n\"\"\"\n", false},
		{"s = '''\nline # not a comment\n'''\n", false},
		{"s = \"\"\"a\"\"\"\" # after\n", true},
		{"s = \"\"\"a\\\"\"\"# still text\"\"\"\n", false},
		{"s = \"\" # after an empty string\n", true},
		{"s = '' # after an empty literal\n", true},
		{"s = \"open\n# next line\n", true}, // a basic string ends at the line
	} {
		if got := HasOwnComments([]byte(tc.data)); got != tc.want {
			t.Errorf("HasOwnComments(%q) = %v, want %v", tc.data, got, tc.want)
		}
	}
}
