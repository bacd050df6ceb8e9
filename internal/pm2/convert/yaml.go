package convert

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// DecodeYAML decodes a YAML ecosystem file (PM2 reads them with js-yaml)
// into the values DecodeJSON gives: mappings keep their order, scalars
// take YAML 1.2's core types (js-yaml's default schema). YAML is data: it
// is never evaluated. Anchors and aliases are resolved; a document with
// more than maxYAMLNodes nodes after that is refused (an alias bomb).
func DecodeYAML(data []byte) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 {
		return nil, fmt.Errorf("the file is empty")
	}
	budget := maxYAMLNodes
	return yamlValue(&doc, &budget, 0)
}

const maxYAMLNodes = 100000

func yamlValue(n *yaml.Node, budget *int, depth int) (any, error) {
	*budget--
	if *budget < 0 {
		return nil, fmt.Errorf("more than %d values (aliases that expand without end?)", maxYAMLNodes)
	}
	if depth > 100 {
		return nil, fmt.Errorf("line %d: nested more than 100 deep", n.Line)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlValue(n.Content[0], budget, depth+1)
	case yaml.AliasNode:
		return yamlValue(n.Alias, budget, depth+1)
	case yaml.SequenceNode:
		list := []any{}
		for _, c := range n.Content {
			v, err := yamlValue(c, budget, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.MappingNode:
		o := &Object{Values: map[string]any{}}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" { // <<: *defaults
				m, err := yamlValue(v, budget, depth+1)
				if err != nil {
					return nil, err
				}
				merge := func(x any) {
					if mo, ok := x.(*Object); ok {
						for _, mk := range mo.Keys {
							if !o.Has(mk) {
								o.set(mk, mo.Values[mk])
							}
						}
					}
				}
				if list, ok := m.([]any); ok {
					for _, x := range list {
						merge(x)
					}
				} else {
					merge(m)
				}
				continue
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key that is not a plain value", k.Line)
			}
			val, err := yamlValue(v, budget, depth+1)
			if err != nil {
				return nil, err
			}
			o.set(k.Value, val)
		}
		return o, nil
	case yaml.ScalarNode:
		return yamlScalar(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func yamlScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return json.Number(strconv.FormatInt(i, 10)), nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return n.Value, nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	default: // !!str, !!timestamp, !!binary and custom tags: the text
		return n.Value, nil
	}
}
