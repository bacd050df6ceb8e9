package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/testutil"
)

// bm2 migrate gives a project whose webhook is on loopback the key that
// lets bm2-notify post there (docs/project-file.md's http://127.0.0.1:9000/hook),
// and no other project; a second run changes nothing.
func TestMigrateLoopbackWebhook(t *testing.T) {
	te := newTestEnv(t)
	priv := "[notify]\nwebhook = \"http://127.0.0.1:9000/hook\"\n"
	local := te.write("etc/bm2/local.toml", "name = \"local\"\nscript = \"a.js\"\ncwd = \"/srv/local\"\nport = 3000\n")
	te.write("etc/bm2/private/local.toml", priv)
	os.Chmod(filepath.Join(te.paths.ConfigDir, "private"), 0o700)
	os.Chmod(filepath.Join(te.paths.ConfigDir, "private", "local.toml"), 0o600)
	v6 := te.write("etc/bm2/six.toml", "name = \"six\"\nscript = \"a.js\"\ncwd = \"/srv/six\"\nport = 3100\n[notify]\nwebhook = \"http://[::1]:9000/hook\"\n")
	far := te.write("etc/bm2/far.toml", "name = \"far\"\nscript = \"a.js\"\ncwd = \"/srv/far\"\nport = 3200\n")
	te.write("etc/bm2/private/far.toml", "[notify]\nwebhook = \"https://hooks.example.com/x\"\n")
	os.Chmod(filepath.Join(te.paths.ConfigDir, "private", "far.toml"), 0o600)
	farBefore, _ := os.ReadFile(far)
	// Registered from alice's file: her word does not get the key.
	src := te.write("home/alice/app/bm2.toml", "name = \"hers\"\n")
	hers := te.write("etc/bm2/hers.toml", "name = \"hers\"\nscript = \"a.js\"\ncwd = \"/srv/hers\"\nport = 3300\nsource = \""+src+"\"\n[notify]\nwebhook = \"http://127.0.0.1:9001/hook\"\n")
	te.speaker = 1001

	te.mustRun(ExitOK, "migrate", "--dry-run")
	if out := te.stdout.String(); !strings.Contains(out, "would migrate "+local+": [notify] allow_local = true (its webhook is on loopback)") ||
		strings.Contains(out, "far.toml") {
		t.Fatalf("dry run:\n%s", out)
	}
	te.mustRun(ExitOK, "migrate")
	for _, f := range []string{local, v6} {
		data, _ := os.ReadFile(f)
		if !strings.Contains(string(data), "[notify]\nallow_local = true\n") || strings.Contains(string(data), "9000") {
			t.Errorf("%s migrated to:\n%s", f, data)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(te.paths.ConfigDir, "private", "local.toml")); !strings.Contains(string(data), "webhook = \"http://127.0.0.1:9000/hook\"") {
		t.Errorf("the webhook is gone from the private part:\n%s", data)
	}
	if data, _ := os.ReadFile(hers); strings.Contains(string(data), "allow_local") || !strings.Contains(te.stderr.String(), hers+": not given [notify] allow_local") {
		t.Errorf("a project registered from a user's file was given allow_local:\n%s\nstderr:\n%s", data, te.stderr.String())
	}
	if data, _ := os.ReadFile(far); string(data) != string(farBefore) {
		t.Errorf("a project with a remote webhook was rewritten:\n%s", data)
	}
	te.mustRun(ExitOK, "migrate")
	if te.stdout.String() != "nothing to migrate in "+te.paths.ConfigDir+"\n" {
		t.Fatalf("second run:\n%s", te.stdout.String())
	}
}

// notify.allow_local speaks only from root's files: a bm2.toml a user
// owns that sets it is refused by check (and serve, which reads it the
// same way), naming the file, line and key; the same file of root's
// passes.
func TestAllowLocalOnlyFromRoot(t *testing.T) {
	testutil.Root(t)
	te := newTestEnv(t)
	port := freePorts(t, 1)
	file := te.write("app/bm2.toml", seedProject(port)+"[notify]\nlevel = \"info\"\nallow_local = true\n")
	te.mustRun(ExitOK, "check", filepath.Dir(file))
	if err := os.Chown(file, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	te.speaker = 65534 // the fake ReadFile's word for who wrote it
	te.mustRun(ExitInvalid, "check", filepath.Dir(file))
	if e := te.stderr.String(); !strings.Contains(e, file+":8: notify.allow_local: is honoured only in a file root wrote") {
		t.Errorf("stderr:\n%s", e)
	}
}

// bm2 check says when bm2-notify will refuse the webhook.
func TestWebhookNote(t *testing.T) {
	for _, c := range []struct {
		url   string
		allow bool
		want  string
	}{
		{"http://127.0.0.1:9000/hook", false, ": bm2-notify refuses it: 127.0.0.1 is a loopback address (allowed only by [notify] allow_local = true in a project file root wrote)"},
		{"http://127.0.0.1:9000/hook", true, ", on loopback (allow_local)"},
		{"http://localhost/x", true, ", on loopback (allow_local)"},
		{"http://169.254.169.254/latest", true, ": bm2-notify refuses it: 169.254.169.254 is the cloud metadata service"},
		{"http://[ff02::1]/", false, ": bm2-notify refuses it: ff02::1 is a multicast address"},
		{"https://hooks.example.com/x", false, ""},
		{"http://10.1.2.3/x", false, ""},
	} {
		if got := control.WebhookNote(config.Notify{Webhook: c.url, AllowLocal: c.allow}); got != c.want {
			t.Errorf("%s (allow_local %v): %q, want %q", c.url, c.allow, got, c.want)
		}
	}
}
