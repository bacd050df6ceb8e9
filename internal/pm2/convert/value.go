package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Object is a JSON object with its keys in the order written: PM2's dump
// keeps an app's environment in insertion order, and that order is part of
// how the app's own variables are told from the daemon's (see dump.go).
// Values are nil, bool, json.Number, string, []any or *Object.
type Object struct {
	Keys   []string
	Values map[string]any
}

// Get returns the value of key and whether it is there.
func (o *Object) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.Values[key]
	return v, ok
}

// clone is a copy of o that can be changed without changing o (its
// values are shared).
func (o *Object) clone() *Object {
	c := &Object{Keys: slices.Clone(o.Keys), Values: make(map[string]any, len(o.Values))}
	maps.Copy(c.Values, o.Values)
	return c
}

// Has tells whether key is there.
func (o *Object) Has(key string) bool { _, ok := o.Get(key); return ok }

func (o *Object) set(key string, v any) {
	if o.Values == nil {
		o.Values = map[string]any{}
	}
	if _, ok := o.Values[key]; !ok {
		o.Keys = append(o.Keys, key)
	}
	o.Values[key] = v
}

// DecodeJSON decodes one JSON value, keeping the order of object keys.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{Values: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := dec.Token() // }
			return o, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token() // ]
			return list, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil // nil, bool, json.Number, string
	}
}

// jsString is a value as JavaScript's String() makes it, which is what
// PM2 does to env values when it hands them to the app: 3000 → "3000",
// true → "true". Objects and arrays become JSON (PM2 stringifies them).
// ok is false for null (no variable).
func jsString(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case json.Number:
		return jsNumber(v), true
	default:
		return compactJSON(v), true
	}
}

// jsNumber writes a JSON number as JavaScript prints it: 3000, 1.5, 1e21.
func jsNumber(n json.Number) string {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && (i < 1<<53 && i > -(1<<53)) {
		return strconv.FormatInt(i, 10)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return string(n)
	}
	if f == float64(int64(f)) && f < 1e21 && f > -1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64) // 1e+21, as JavaScript writes it
}

func compactJSON(v any) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		b.WriteString(jsNumber(v))
	case string:
		q, _ := json.Marshal(v)
		b.Write(q)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case *Object:
		b.WriteByte('{')
		for i, k := range v.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(k)
			b.Write(q)
			b.WriteByte(':')
			writeJSON(b, v.Values[k])
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%v", v)
	}
}

// describe names a value's JSON type, for messages.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + jsNumber(v)
	case string:
		return strconv.Quote(v)
	case []any:
		return "an array"
	case *Object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// truthy is JavaScript's truthiness, for PM2's boolean keys.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case json.Number:
		f, _ := v.Float64()
		return f != 0
	}
	return true
}

func jsonNumber(s string) any { return json.Number(s) }

var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// numbers applies PM2's "auto parse Number" (lib/tools/Config.js,
// Config._valid) to an app: the value of a key whose schema type
// includes number (rule.Number), given as a string that is a number, is
// that number: max_restarts: "400" is 400, port: " 8080 " is 8080,
// kill_timeout: "1e3" is 1000. A string that is no number ("200M",
// "10s", "max") stays a string, for the key's own reading. Only decimal
// numbers are taken: PM2 reads "0x10" as 0 and "" as NaN, and such
// values are left for the key to refuse. The app is copied when a value
// changes, never changed.
func numbers(a *Object) *Object {
	out := a
	for _, r := range rules {
		if !r.Number {
			continue
		}
		for _, k := range append([]string{r.Key}, r.Aliases...) {
			s, ok := a.Values[k].(string)
			if !ok {
				continue
			}
			t := strings.TrimSpace(s)
			if !decimalRE.MatchString(t) {
				continue
			}
			f, err := strconv.ParseFloat(t, 64)
			if err != nil || math.IsInf(f, 0) {
				continue
			}
			if out == a {
				out = a.clone()
			}
			out.Values[k] = json.Number(jsNumber(json.Number(strconv.FormatFloat(f, 'g', -1, 64))))
		}
	}
	return out
}
