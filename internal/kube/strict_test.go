package kube

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// documents splits a YAML stream at its "---" lines, leaving out what
// holds only comments.
func documents(t *testing.T, stream []byte) []string {
	t.Helper()
	var out []string
	for _, doc := range strings.Split("\n"+string(stream), "\n---\n") {
		body := false
		for _, line := range strings.Split(doc, "\n") {
			if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
				body = true
			}
		}
		if body {
			out = append(out, doc)
		}
	}
	return out
}

// kinds are the objects bm2 writes, by apiVersion and kind, each with
// the type it must decode into.
var kinds = map[string]func() any{
	"v1/Service":                             func() any { return &corev1.Service{} },
	"v1/Secret":                              func() any { return &corev1.Secret{} },
	"apps/v1/Deployment":                     func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                    func() any { return &appsv1.StatefulSet{} },
	"gateway.networking.k8s.io/v1/HTTPRoute": func() any { return &gwv1.HTTPRoute{} },
}

// decodeStrict decodes one document into the type of its kind, refusing
// an unknown or duplicate field.
func decodeStrict(doc string) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
		return nil, err
	}
	mk, ok := kinds[tm.APIVersion+"/"+tm.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown apiVersion %q kind %q", tm.APIVersion, tm.Kind)
	}
	obj := mk()
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	return obj, nil
}

// decodeAll decodes every document of a stream strictly.
func decodeAll(t *testing.T, stream []byte) []any {
	t.Helper()
	var out []any
	for _, doc := range documents(t, stream) {
		obj, err := decodeStrict(doc)
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		out = append(out, obj)
	}
	return out
}

// Every document of every golden case decodes strictly into the API type
// of its kind, and the kinds are the ones the file says it holds.
func TestEveryDocumentDecodesStrictly(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			srcs := c.sources(t)
			if c.routes {
				out, err := Routes(srcs, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, obj := range decodeAll(t, out) {
					if _, ok := obj.(*gwv1.HTTPRoute); !ok {
						t.Errorf("Routes gave a %T", obj)
					}
				}
				return
			}
			res, err := Export(srcs, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Files {
				objs := decodeAll(t, f.Data)
				if len(objs) != len(f.Kinds) {
					t.Fatalf("%s: %d documents, Kinds says %v", f.Name, len(objs), f.Kinds)
				}
				for i, obj := range objs {
					if got := fmt.Sprintf("%T", obj); !strings.HasSuffix(got, "."+f.Kinds[i]) {
						t.Errorf("%s: document %d is a %s, Kinds says %s", f.Name, i, got, f.Kinds[i])
					}
				}
			}
		})
	}
}

// The strict decode can fail: a field the type does not have, a field
// given twice and a misspelt kind are refused.
func TestStrictDecodeRefusesUnknownFields(t *testing.T) {
	res, err := Export([]Source{source(t, "api")}, Options{Image: testImage})
	if err != nil {
		t.Fatal(err)
	}
	var deployment string
	for _, doc := range documents(t, res.Manifests()) {
		if strings.Contains(doc, "\nkind: Deployment\n") {
			deployment = doc
		}
	}
	if _, err := decodeStrict(deployment); err != nil {
		t.Fatalf("the Deployment itself: %v", err)
	}
	for name, bad := range map[string]string{
		"unknown field": strings.Replace(deployment, "\n  replicas: 4\n", "\n  replicas: 4\n  replica: 4\n", 1),
		"nested":        strings.Replace(deployment, "\n        workingDir: /srv/api\n", "\n        workingDir: /srv/api\n        workdir: /srv/api\n", 1),
		"duplicate":     strings.Replace(deployment, "\n  replicas: 4\n", "\n  replicas: 4\n  replicas: 5\n", 1),
		"kind":          strings.Replace(deployment, "kind: Deployment", "kind: Deploymant", 1),
	} {
		if bad == deployment {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if _, err := decodeStrict(bad); err == nil {
			t.Errorf("%s: decoded without an error:\n%s", name, bad)
		}
	}
}
