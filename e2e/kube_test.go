package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/bm2dev/bm2/e2e/runtimes"
	"github.com/bm2dev/bm2/e2e/sandbox"
	"github.com/bm2dev/bm2/internal/testutil"
)

// TestKubePodman exports a cluster-mode and a fork-mode project with
// bm2 export kube and runs the Deployments on a real engine: Debian's
// podman 4.3 (`podman kube play`), with an image made offline from the
// Node.js binary the tests fetch and the app (`podman import` of a root
// file system). Every pod answers, as the exported sandbox lets it: a
// non-root user, a read-only root, writable /tmp and state directory, no
// BM2_APP_INSTANCE.
//
// It runs on the host, in a network and mount namespace of its own (the
// pods' bridge, firewall rules and podman's network files go with it),
// with podman's storage in a temporary directory. What this host needs
// of podman, found here: runc, since crun refuses a hybrid cgroup
// hierarchy ("cgroups in hybrid mode not supported"); rlimits the
// process may set (podman asks for 1048576 open files and processes,
// and without CAP_SYS_RESOURCE setrlimit fails), given in
// containers.conf and under prlimit; and the container ports left out
// of the played copy, since podman 4.3 publishes every containerPort on
// the host's same port, which a second replica cannot bind (Kubernetes
// publishes nothing). The manifests' Services are not played (podman
// 4.3 plays Pods and Deployments), nor their probes (its health checks
// need a systemd to run timers in): the golden files and the strict
// decode cover those parts.
func TestKubePodman(t *testing.T) {
	t.Parallel()
	sandbox.RequireRoot(t)
	for cmd, pkg := range map[string]string{"podman": "podman", "runc": "runc", "catatonit": "catatonit", "unshare": "util-linux", "prlimit": "util-linux"} {
		if _, err := exec.LookPath(cmd); err != nil {
			testutil.Skip(t, testutil.Need{What: "no " + cmd, Fix: "sudo apt-get install " + pkg + " (make test-deps)"}, err)
		}
	}
	node := runtimes.Require(t, runtimes.Node, runtimes.Node24Version)
	repo := repoRoot(t)
	dir := t.TempDir()

	// The image: the Node.js binary and its libraries, the app, an
	// unprivileged user.
	rootfs := filepath.Join(dir, "rootfs")
	app, err := os.ReadFile(filepath.Join(repo, "e2e/apps/kube-server.js"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"etc/passwd":       []byte("root:x:0:0::/:/bin/false\nnobody:x:65534:65534::/:/bin/false\n"),
		"etc/group":        []byte("root:x:0:\nnogroup:x:65534:\n"),
		"srv/kc/server.js": app, "srv/kf/server.js": app,
	}
	for p, data := range files {
		writeFile(t, filepath.Join(rootfs, p), data, 0o644)
	}
	bin, err := os.ReadFile(node)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(rootfs, "usr/local/bin/node"), bin, 0o755)
	ldd, err := exec.Command("ldd", node).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", node, err)
	}
	for _, lib := range regexp.MustCompile(`(?m)(/\S+)`).FindAllString(string(ldd), -1) {
		data, err := os.ReadFile(lib)
		if err != nil {
			t.Fatalf("%s: %v", lib, err)
		}
		writeFile(t, filepath.Join(rootfs, lib), data, 0o755)
	}
	for _, d := range []string{"tmp", "proc", "sys", "dev", "var/lib"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// /tmp as every image has it (podman fills an emptyDir from the
	// image's directory; a kubelet's is 0777).
	if err := os.Chmod(filepath.Join(rootfs, "tmp"), 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}

	// The projects, and their manifests.
	writeFile(t, filepath.Join(dir, "kc.toml"), []byte("name = \"kc\"\nscript = \"server.js\"\ncwd = \"/srv/kc\"\nruntime = \"node\"\ninstances = 2\nport = 3000\n[resources]\nmemory_max = \"256M\"\n"), 0o644)
	writeFile(t, filepath.Join(dir, "kf.toml"), []byte("name = \"kf\"\nscript = \"server.js\"\ncwd = \"/srv/kf\"\nruntime = \"node\"\ninstances = 3\nport = 4000\nexec_mode = \"fork\"\n"), 0o644)
	image := fmt.Sprintf("localhost/bm2-e2e-kube:%d", os.Getpid())
	out := filepath.Join(dir, "out")
	export := exec.Command(filepath.Join(repo, "bin/bm2"), "export", "kube", filepath.Join(dir, "kc.toml"), filepath.Join(dir, "kf.toml"), "--image", image, "--out", out)
	if b, err := export.CombinedOutput(); err != nil {
		t.Fatalf("bm2 export kube: %v\n%s", err, b)
	}
	replicas := map[string]int{"kc": 2, "kf": 3}
	for name, n := range replicas {
		data, err := os.ReadFile(filepath.Join(out, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		d := playable(t, data, n)
		writeFile(t, filepath.Join(dir, name+".play.yaml"), d, 0o644)
	}

	hard := func(r int) uint64 {
		var l syscall.Rlimit
		if err := syscall.Getrlimit(r, &l); err != nil {
			t.Fatal(err)
		}
		return l.Max
	}
	nproc := min(uint64(4096), hard(6 /* RLIMIT_NPROC */))
	writeFile(t, filepath.Join(dir, "containers.conf"), []byte(fmt.Sprintf("[containers]\ndefault_ulimits = [\"nofile=%[1]d:%[1]d\", \"nproc=%[2]d:%[2]d\"]\n", hard(syscall.RLIMIT_NOFILE), nproc)), 0o644)
	script := fmt.Sprintf(`set -eu
D=%[1]q
ip link set lo up
mkdir -p /etc/containers/networks && mount -t tmpfs tmpfs /etc/containers/networks
PM="podman --root $D/store --runroot $D/run --tmpdir $D/tmp --runtime runc"
mkdir -p $D/tmp
tar -C $D/rootfs -c . | $PM import --change 'USER 65534:65534' --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' - %[2]s >/dev/null
for p in kc kf; do $PM kube play $D/$p.play.yaml >$D/$p.play.log 2>&1 || { cat $D/$p.play.log; exit 1; }; done
for c in $($PM ps -q --filter label=app.kubernetes.io/managed-by=bm2); do
	name=$($PM inspect $c --format '{{index .Config.Labels "app.kubernetes.io/name"}}')
	ip=$($PM inspect $c --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}')
	port=3000; test "$name" = kf && port=4000
	ok=
	for i in $(seq 100); do
		if a=$(curl -sf --max-time 2 http://$ip:$port/); then echo "POD $name $ip $a"; ok=1; break; fi
		sleep 0.1
	done
	test -n "$ok" || { echo "no answer from $name at $ip:$port"; $PM logs $c; exit 1; }
done
for p in kc kf; do $PM kube play --down $D/$p.play.yaml >/dev/null 2>&1; done
$PM rmi -f %[2]s >/dev/null 2>&1 || true
`, dir, image)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "prlimit", fmt.Sprintf("--nproc=%d:%d", nproc, nproc), "--",
		"unshare", "--net", "--mount", "--fork", "--propagation", "private", "bash", "-c", script)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+filepath.Join(dir, "containers.conf"))
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("podman kube play: %v\n%s", err, buf.String())
	}
	type answer struct {
		Host, Name, RootWrite, StateWrite, TmpWrite string
		UID                                         int
		Instance                                    *string
	}
	pods := map[string]map[string]bool{}
	for _, line := range strings.Split(buf.String(), "\n") {
		f := strings.SplitN(line, " ", 4)
		if len(f) != 4 || f[0] != "POD" {
			continue
		}
		var a answer
		if err := json.Unmarshal([]byte(f[3]), &a); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if pods[f[1]] == nil {
			pods[f[1]] = map[string]bool{}
		}
		pods[f[1]][a.Host] = true
		if a.Name != f[1] || a.UID != 65534 || a.Instance != nil || a.RootWrite != "EROFS" || a.StateWrite != "ok" || a.TmpWrite != "ok" {
			t.Errorf("pod %s at %s: %+v (want BM2_APP_NAME %s, uid 65534, no BM2_APP_INSTANCE, a read-only root, writable state and /tmp)", f[1], f[2], a, f[1])
		}
	}
	for name, n := range replicas {
		if len(pods[name]) != n {
			t.Errorf("%s: %d pods answered, want %d (its replicas):\n%s", name, len(pods[name]), n, buf.String())
		}
	}
	t.Logf("podman:\n%s", buf.String())
}

// playable decodes a manifest stream strictly, checks its Deployment,
// and returns the stream podman 4.3 can play: the Deployment with its
// containers' ports left out (see TestKubePodman).
func playable(t *testing.T, stream []byte, replicas int) []byte {
	t.Helper()
	var out []byte
	kinds := map[string]int{}
	for _, doc := range regexp.MustCompile(`(?m)^---$`).Split(string(stream), -1) {
		var tm struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil || tm.Kind == "" {
			continue // the comment header
		}
		kinds[tm.Kind]++
		switch tm.Kind {
		case "Service":
			var s corev1.Service
			if err := yaml.UnmarshalStrict([]byte(doc), &s); err != nil {
				t.Fatalf("Service: %v\n%s", err, doc)
			}
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict([]byte(doc), &d); err != nil {
				t.Fatalf("Deployment: %v\n%s", err, doc)
			}
			if d.Spec.Replicas == nil || int(*d.Spec.Replicas) != replicas {
				t.Errorf("%s: replicas %v, want %d", d.Name, d.Spec.Replicas, replicas)
			}
			for i := range d.Spec.Template.Spec.Containers {
				d.Spec.Template.Spec.Containers[i].Ports = nil
			}
			b, err := yaml.Marshal(&d)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b...)
		default:
			t.Errorf("unexpected %s in the manifests:\n%s", tm.Kind, doc)
		}
	}
	if kinds["Service"] != 1 || kinds["Deployment"] != 1 {
		t.Errorf("kinds %v, want one Service and one Deployment", kinds)
	}
	return out
}

func writeFile(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}
