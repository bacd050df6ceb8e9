package kube

import (
	"encoding/json"
	"fmt"
	"github.com/bm2dev/bm2/internal/termtext"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// httpRoute sends the Gateway's requests for the hostnames (and, with a
// path prefix, the project's path below it, which reaches the app
// unchanged) to the project's Service.
func (m *model) httpRoute() *gwv1.HTTPRoute {
	parent := gwv1.ParentReference{Name: gwv1.ObjectName(m.o.gateway.name)}
	if ns := m.o.gateway.namespace; ns != "" {
		parent.Namespace = new(gwv1.Namespace(ns))
	}
	rule := gwv1.HTTPRouteRule{
		BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{
			Name: gwv1.ObjectName(m.name),
			Port: new(gwv1.PortNumber(m.p.Port)),
		}}}},
	}
	if m.route != "" {
		rule.Matches = []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{
			Type:  new(gwv1.PathMatchPathPrefix),
			Value: new(m.route),
		}}}
	}
	var hosts []gwv1.Hostname
	for _, h := range m.o.hostnames {
		hosts = append(hosts, gwv1.Hostname(h))
	}
	return &gwv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: m.meta(m.name),
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{parent}},
			Hostnames:       hosts,
			Rules:           []gwv1.HTTPRouteRule{rule},
		},
	}
}

// envSecretObject is [env] as a Secret, its values in stringData.
func (m *model) envSecretObject() *corev1.Secret {
	data := make(map[string]string, len(m.p.Env))
	for _, e := range m.p.Env {
		data[e.Name] = e.Value
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: m.meta(m.envSecret()),
		Type:       corev1.SecretTypeOpaque,
		StringData: data,
	}
}

// manifests is the project's file: the notes, then the Service(s), the
// workload and the route; a worker's, the notes and the workload.
func (m *model) manifests() File {
	f := File{Project: m.p.Name, Name: m.p.Name + ".yaml"}
	var b strings.Builder
	comment(&b, fmt.Sprintf("bm2 export kube: project %s, from %s. Edit that file and export again: changes made here are lost.", m.p.Name, m.src.file()))
	for _, n := range m.notes {
		comment(&b, "")
		comment(&b, n)
	}
	if len(m.warnings) > 0 {
		comment(&b, "")
		comment(&b, "Left out or changed (no equivalent in a pod):")
		for _, w := range m.warnings {
			comment(&b, "- "+w.Error())
		}
	}
	// A worker has no port: no Service, no headless one, no route (the
	// notes say so).
	worker := m.p.IsWorker()
	var objs []any
	if !worker {
		objs = append(objs, m.service())
	}
	switch {
	case m.o.Ordinal && worker:
		objs = append(objs, m.statefulSet())
	case m.o.Ordinal:
		objs = append(objs, m.headlessService(), m.statefulSet())
	default:
		objs = append(objs, m.deployment())
	}
	if m.o.gateway.name != "" && !worker {
		objs = append(objs, m.httpRoute())
	}
	for _, o := range objs {
		kind := document(&b, o)
		f.Kinds = append(f.Kinds, kind)
	}
	f.Data = []byte(b.String())
	return f
}

// secretFile is the project's [env] Secret, a file of its own.
func (m *model) secretFile() File {
	var b strings.Builder
	comment(&b, fmt.Sprintf("bm2 export kube: the [env] of project %s, from %s, as Secret %s. It holds the values: keep this file (mode 0600) out of version control.", m.p.Name, m.src.file(), m.envSecret()))
	kind := document(&b, m.envSecretObject())
	return File{Project: m.p.Name, Name: m.p.Name + ".secret.yaml", Data: []byte(b.String()), Secret: true, Kinds: []string{kind}}
}

// routeFile is the project's HTTPRoute alone, with a comment on what it
// sends where.
func (m *model) routeFile() []byte {
	var b strings.Builder
	where := "every path"
	if m.route != "" {
		where = m.route + " and below"
	}
	how := fmt.Sprintf("%d replicas, each listening on port %d, balanced by the Service", m.p.Instances, m.p.Port)
	if m.p.Mode == "fork" {
		how += " (fork mode's port+i is a host matter: each pod has the whole port)"
	}
	comment(&b, fmt.Sprintf("bm2 gateway httproute: project %s, from %s: %s of Gateway %s to Service %s, port %d: %s.",
		m.p.Name, m.src.file(), where, m.o.Gateway, m.name, m.p.Port, how))
	document(&b, m.httpRoute())
	return []byte(b.String())
}

// document appends obj as a YAML document and returns its kind. The
// bytes are sigs.k8s.io/yaml's (keys sorted), less what an object that
// was never sent to a cluster has no business saying: its status, and
// null fields.
func document(b *strings.Builder, obj any) string {
	data, err := json.Marshal(obj)
	if err != nil {
		panic(fmt.Sprintf("kube: marshal %T: %v", obj, err)) // the API types always marshal
	}
	var tree map[string]any
	if err := json.Unmarshal(data, &tree); err != nil {
		panic(fmt.Sprintf("kube: %T: %v", obj, err))
	}
	delete(tree, "status")
	prune(tree)
	clean, _ := json.Marshal(tree)
	out, err := yaml.JSONToYAML(clean)
	if err != nil {
		panic(fmt.Sprintf("kube: %T to YAML: %v", obj, err))
	}
	b.WriteString("---\n")
	b.Write(out)
	kind, _ := tree["kind"].(string)
	return kind
}

// prune removes null fields and empty containers' resources ({}), at
// every depth.
func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if x == nil {
				delete(t, k)
				continue
			}
			if m, ok := x.(map[string]any); ok && len(m) == 0 && k == "resources" {
				delete(t, k)
				continue
			}
			prune(x)
		}
	case []any:
		for _, x := range t {
			prune(x)
		}
	}
}

// comment appends text as "# " lines wrapped at 78 columns; "" is a bare
// "#".
func comment(b *strings.Builder, text string) {
	if text == "" {
		b.WriteString("#\n")
		return
	}
	const width = 76
	line := ""
	// A file's path is the user's: a control character in it would make
	// the stream invalid YAML and reach a terminal raw.
	for _, w := range strings.Fields(termtext.Escape(text)) {
		if line != "" && len(line)+1+len(w) > width {
			b.WriteString("# " + line + "\n")
			line = "  "[:indent(text)]
		}
		if line == "" || strings.TrimSpace(line) == "" {
			line += w
		} else {
			line += " " + w
		}
	}
	b.WriteString("# " + line + "\n")
}

// indent is how far a list item's continuation lines are indented.
func indent(text string) int {
	if strings.HasPrefix(text, "- ") {
		return 2
	}
	return 0
}
