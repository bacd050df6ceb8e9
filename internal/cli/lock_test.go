package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"

	"golang.org/x/sys/unix"
)

// eventually waits until cond holds, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// holdLock takes the registry lock the way another bm2 process would: on
// an open file description of its own, with pid written into the file.
// The returned function releases it.
func holdLock(t *testing.T, te *testEnv, pid int) func() {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(te.paths.LockFile), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(te.paths.LockFile, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(fmt.Sprintf("%d\n", pid)), 0); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() { once.Do(func() { f.Close() }) }
	t.Cleanup(release)
	return release
}

// background runs a bm2 command line in a goroutine with its own output
// buffers; the exit code arrives on the channel.
func background(ctx context.Context, te *testEnv, args ...string) (stdout, stderr *testutil.SyncBuffer, code <-chan int) {
	stdout, stderr = &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	a := te.app()
	a.Out, a.Err = stdout, stderr
	c := make(chan int, 1)
	go func() { c <- a.Main(ctx, args) }()
	return stdout, stderr, c
}

// tomlFiles lists the project files (and other entries but directories)
// in dir, sorted.
func tomlFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Several serves at once, of projects whose port ranges all overlap: one
// registers, every other one is refused with the conflict a serve run
// after the winner gets, and only the winner's files are left (issue: two
// serves at once on the same port both registered).
func TestServeRaceRegistersOne(t *testing.T) {
	const racers = 8
	rounds := 50
	if testing.Short() {
		rounds = 5
	}
	for round := 0; round < rounds; round++ {
		te := newTestEnv(t)
		var dirs []string
		for i := 0; i < racers; i++ {
			// p<i> holds 3000+i ~ 3007+i: every two ranges overlap.
			dirs = append(dirs, filepath.Dir(te.write(fmt.Sprintf("srv/p%d/bm2.toml", i), fmt.Sprintf(
				"name = \"p%d\"\nscript = \"a.js\"\ninstances = %d\nport = %d\nexec_mode = \"fork\"\n\n[env]\nSECRET = \"s%d\"\n",
				i, racers, 3000+i, i))))
		}
		type result struct {
			code           int
			stdout, stderr string
		}
		results := make([]result, racers)
		var ready, done sync.WaitGroup
		start := make(chan struct{})
		for i := range racers {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				var out, errOut testutil.SyncBuffer
				a := te.app()
				a.Out, a.Err = &out, &errOut
				ready.Done()
				<-start
				code := a.Main(context.Background(), []string{"serve", dirs[i]})
				results[i] = result{code, out.String(), errOut.String()}
			}()
		}
		ready.Wait()
		close(start)
		done.Wait()

		winner := -1
		for i, r := range results {
			if r.code == ExitOK {
				if winner >= 0 {
					t.Fatalf("round %d: p%d and p%d both registered\np%d:\n%s%s\np%d:\n%s%s", round, winner, i,
						winner, results[winner].stdout, results[winner].stderr, i, r.stdout, r.stderr)
				}
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no serve registered: %+v", round, results)
		}
		w := fmt.Sprintf("p%d", winner)
		for i, r := range results {
			if i == winner {
				continue
			}
			wantErr := fmt.Sprintf("bm2: port conflict: p%d port range %d~%d overlaps %s %d~%d\n"+
				"bm2: choose another port in bm2.toml, or unregister %s (%s) with `bm2 delete %s`\n",
				i, 3000+i, 3007+i, w, 3000+winner, 3007+winner, w, filepath.Join(te.paths.ConfigDir, w+".toml"), w)
			if r.code != ExitInvalid || !strings.HasSuffix(r.stderr, wantErr) || r.stdout != "" {
				t.Fatalf("round %d: p%d (winner %s): exit %d, want %d\nstdout:\n%s\nstderr:\n%s\nwant stderr ending in:\n%s",
					round, i, w, r.code, ExitInvalid, r.stdout, r.stderr, wantErr)
			}
		}
		if got := tomlFiles(t, te.paths.ConfigDir); len(got) != 1 || got[0] != w+".toml" {
			t.Fatalf("round %d: %s holds %q, want only %s.toml", round, te.paths.ConfigDir, got, w)
		}
		if got := tomlFiles(t, filepath.Join(te.paths.ConfigDir, "private")); len(got) != 1 || got[0] != w+".toml" {
			t.Fatalf("round %d: the private dir holds %q, want only %s.toml", round, got, w)
		}
		st, _ := te.sd.Units(context.Background(), []string{"bm2-" + w + ".target"})
		if st[0].LoadState != "loaded" || st[0].ActiveState != "active" {
			t.Fatalf("round %d: the winner's target is %s/%s", round, st[0].LoadState, st[0].ActiveState)
		}
	}
}

// A serve waits while another command holds the lock, says for whom, and
// changes nothing until it has it; an interrupt or its --timeout ends the
// wait with an error.
func TestServeWaitsForTheLock(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	release := holdLock(t, te, 4242)
	const waiting = "bm2: waiting for another bm2 command that changes the registered projects (pid 4242)\n"

	// Interrupted.
	ctx, cancel := context.WithCancel(context.Background())
	_, stderr, code := background(ctx, te, "serve", dir)
	eventually(t, "serve to wait", func() bool { return stderr.String() == waiting })
	time.Sleep(50 * time.Millisecond) // a few rounds of trying the lock
	if _, err := os.Stat(reg); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("serve wrote %s while the lock was held", reg)
	}
	if c := te.sd.Calls(); len(c) != 0 {
		t.Fatalf("serve called systemd while the lock was held: %q", c)
	}
	cancel()
	select {
	case c := <-code:
		if c != ExitFailure {
			t.Fatalf("exit %d\n%s", c, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve went on waiting after its context was canceled")
	}
	want := waiting + "bm2: interrupted while waiting for another bm2 command that changes the registered projects (pid 4242): context canceled\n" +
		"bm2: nothing was changed; run the command again to finish\n"
	if got := stderr.String(); got != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", got, want)
	}

	// Timed out.
	te.mustRun(ExitFailure, "serve", "--timeout", "60ms", dir)
	if got := te.stderr.String(); !strings.HasPrefix(got, waiting+"bm2: gave up after ") ||
		!strings.HasSuffix(got, " waiting for another bm2 command that changes the registered projects (pid 4242): context deadline exceeded\n"+
			"bm2: nothing was changed; run the command again once the other one has finished\n") {
		t.Fatalf("stderr:\n%s", got)
	}
	if _, err := os.Stat(reg); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("serve wrote %s while the lock was held", reg)
	}

	// Released: serve goes on.
	stdout, stderr, code := background(context.Background(), te, "serve", dir)
	eventually(t, "serve to wait", func() bool { return stderr.String() == waiting })
	release()
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d\n%s%s", c, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(reg); err != nil {
		t.Fatal(err)
	}

	// The lock file, made by serve when it is missing: root's alone, in a
	// directory everyone may look into; serve leaves it unlocked, with no
	// PID in it.
	os.RemoveAll(filepath.Dir(te.paths.LockFile))
	te.write("srv/api/bm2.toml", strings.Replace(seedAPI, "instances = 4", "instances = 2", 1))
	old := unix.Umask(0o077)
	code2 := te.run("serve", dir)
	unix.Umask(old)
	if code2 != ExitOK || te.stderr.String() != "" {
		t.Fatalf("exit %d\n%s", code2, te.stderr.String())
	}
	st, err := os.Lstat(te.paths.LockFile)
	if err != nil || st.Mode() != 0o600 || st.Size() != 0 {
		t.Fatalf("lock file: %v, %v", st.Mode(), err)
	}
	if st, err := os.Lstat(filepath.Dir(te.paths.LockFile)); err != nil || st.Mode() != fs.ModeDir|0o755 {
		t.Fatalf("lock dir: %v, %v", st.Mode(), err)
	}
	holdLock(t, te, 1)() // nobody holds it
}

// A lock file that is a symbolic link is never followed.
func TestLockRefusesSymlink(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	elsewhere := te.write("elsewhere", "")
	if err := os.MkdirAll(filepath.Dir(te.paths.LockFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, te.paths.LockFile); err != nil {
		t.Fatal(err)
	}
	te.mustRun(ExitFailure, "serve", dir)
	if !strings.Contains(te.stderr.String(), te.paths.LockFile+" is a symbolic link") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(te.paths.ConfigDir, "api.toml")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("api.toml written: %v", err)
	}
	if data, _ := os.ReadFile(elsewhere); len(data) != 0 {
		t.Fatalf("wrote through the link: %q", data)
	}
}

// bm2 delete takes the lock too: it stops nothing and removes nothing
// while another command holds it.
func TestDeleteTakesTheLock(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	te.mustRun(ExitOK, "serve", dir)
	te.sd.Calls()

	release := holdLock(t, te, 4242)
	stdout, stderr, code := background(context.Background(), te, "delete", "api")
	eventually(t, "delete to wait", func() bool {
		return stderr.String() == "bm2: waiting for another bm2 command that changes the registered projects (pid 4242)\n"
	})
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(reg); err != nil {
		t.Fatalf("delete removed %s while the lock was held: %v", reg, err)
	}
	if c := te.sd.Calls(); len(c) != 0 {
		t.Fatalf("delete called systemd while the lock was held: %q", c)
	}
	release()
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d\n%s%s", c, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(reg); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s is still there: %v", reg, err)
	}
}

// bm2 migrate takes it as well (but not for --dry-run, which changes
// nothing).
func TestMigrateTakesTheLock(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/old.toml", "name = \"old\"\nscript = \"a.js\"\ncwd = \"/srv/old\"\nport = 4000\n")
	release := holdLock(t, te, 4242)
	te.mustRun(ExitOK, "migrate", "--dry-run")
	if te.stderr.String() != "" {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	stdout, stderr, code := background(context.Background(), te, "migrate", "--from-0.1")
	eventually(t, "migrate to wait", func() bool { return strings.HasPrefix(stderr.String(), "bm2: waiting for ") })
	if stdout.String() != "" {
		t.Fatalf("migrate went on while the lock was held:\n%s", stdout.String())
	}
	release()
	if c := <-code; c != ExitOK || !strings.HasPrefix(stdout.String(), "migrated ") {
		t.Fatalf("exit %d\n%s%s", c, stdout.String(), stderr.String())
	}
}

// A project the generator skips after serve wrote it (here: a file that
// takes its ports, written behind bm2's back just before the reload) is
// taken back: serve fails with the generator's reason and leaves the
// files as they were.
func TestServeTakesBackWhatTheGeneratorSkipped(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")
	priv := filepath.Join(te.paths.ConfigDir, "private", "api.toml")
	var once sync.Once
	sneak := func(port int) func() {
		once = sync.Once{}
		return func() {
			once.Do(func() {
				te.write("etc/bm2/aaa.toml", fmt.Sprintf("name = \"aaa\"\nscript = \"a.js\"\ncwd = \"/srv/aaa\"\nport = %d\n", port))
			})
		}
	}

	// A new project: nothing of it is left.
	te.sd.beforeReload = sneak(3000)
	te.mustRun(ExitInvalid, "serve", dir)
	if want := "bm2: port conflict: api port range 3000~3000 overlaps aaa 3000~3000\n"; !strings.HasPrefix(te.stderr.String(), want) {
		t.Fatalf("stderr:\n%s\nwant:\n%s", te.stderr.String(), want)
	}
	if !strings.Contains(te.stdout.String(), "removed "+reg+" again: systemd did not take it\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	for _, f := range []string{reg, priv} {
		if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s is left: %v", f, err)
		}
	}
	if got := te.sd.Calls(); len(got) != 2 || got[0] != "reload" || got[1] != "reload" {
		t.Fatalf("calls %q, want two reloads and nothing started", got)
	}

	// A running project whose new range is taken: the previous
	// registration is put back, and systemd has it again.
	te.sd.beforeReload = nil
	if err := os.Remove(filepath.Join(te.paths.ConfigDir, "aaa.toml")); err != nil {
		t.Fatal(err)
	}
	te.mustRun(ExitOK, "serve", dir)
	oldPub, _ := os.ReadFile(reg)
	oldPriv, _ := os.ReadFile(priv)
	te.write("srv/api/bm2.toml", strings.NewReplacer("port = 3000", "port = 4000", `"production"`, `"staging"`).Replace(seedAPI))
	te.sd.beforeReload = sneak(4000)
	te.mustRun(ExitInvalid, "serve", dir)
	if want := "bm2: port conflict: api port range 4000~4000 overlaps aaa 4000~4000\n"; !strings.HasPrefix(te.stderr.String(), want) {
		t.Fatalf("stderr:\n%s\nwant:\n%s", te.stderr.String(), want)
	}
	if !strings.Contains(te.stdout.String(), "put the previous "+reg+" back: systemd did not take the new one\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	if pub, _ := os.ReadFile(reg); !bytes.Equal(pub, oldPub) {
		t.Fatalf("%s:\n%s\nwant:\n%s", reg, pub, oldPub)
	}
	if pv, _ := os.ReadFile(priv); !bytes.Equal(pv, oldPriv) {
		t.Fatalf("%s:\n%s\nwant:\n%s", priv, pv, oldPriv)
	}
	if st, _ := os.Stat(reg); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
	st, _ := te.sd.Units(context.Background(), []string{"bm2-api.target", "bm2@api-0.service"})
	if st[0].LoadState != "loaded" || st[1].LoadState != "loaded" || st[1].ActiveState != "active" {
		t.Fatalf("after taking it back: %+v", st)
	}
}

// When bm2 cannot tell why the generator skipped the project, serve says
// where to look.
func TestServeTakesBackWhatTheGeneratorSkippedForAnUnknownReason(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	// A file only the generator reads takes the port.
	hidden := filepath.Dir(te.write("hidden/aaa.toml", "name = \"aaa\"\nscript = \"a.js\"\ncwd = \"/srv/aaa\"\nport = 3000\n"))
	te.sd.dirs = append(te.sd.dirs, hidden)
	te.mustRun(ExitFailure, "serve", dir)
	want := "bm2: systemd has no units for api after daemon-reload: bm2-generator skipped " + filepath.Join(te.paths.ConfigDir, "api.toml") + "\n" +
		"bm2: `journalctl -b -t bm2` shows why bm2-generator skipped it\n"
	if got := te.stderr.String(); got != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", got, want)
	}
	if got := tomlFiles(t, te.paths.ConfigDir); len(got) != 0 {
		t.Fatalf("left in %s: %q", te.paths.ConfigDir, got)
	}
	if got := tomlFiles(t, filepath.Join(te.paths.ConfigDir, "private")); len(got) != 0 {
		t.Fatalf("left in the private dir: %q", got)
	}
}
