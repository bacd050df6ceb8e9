package convert

import (
	"fmt"
	"path"
	"strings"
)

// Parse reads an ecosystem file that is data (JSON, YAML, a package.json
// with "apps") or a dump.pm2, by its name and content. A .json (or
// .json5) file that is not strict JSON is JavaScript to PM2 (it
// evaluates the text as an expression): NotJSONError says so, and the
// caller evaluates it.
func Parse(file string, data []byte) (Source, error) {
	switch ext := strings.ToLower(path.Ext(file)); {
	case ext == ".yaml" || ext == ".yml":
		v, err := DecodeYAML(data)
		if err != nil {
			return Source{}, fmt.Errorf("%s: not YAML PM2 can read: %w", file, err)
		}
		return FromValue(file, v)
	default:
		v, err := DecodeJSON(data)
		if err != nil {
			if ext == ".pm2" || strings.HasPrefix(path.Base(file), "dump.pm2") {
				return Source{}, fmt.Errorf("%s: not a dump written by pm2 save: %w", file, err)
			}
			return Source{}, &NotJSONError{File: file, Err: err}
		}
		return FromValue(file, v)
	}
}

// NotJSONError is a .json file that is not strict JSON.
type NotJSONError struct {
	File string
	Err  error
}

func (e *NotJSONError) Error() string { return e.File + ": not JSON: " + e.Err.Error() }
func (e *NotJSONError) Unwrap() error { return e.Err }

// FromValue makes a Source of an ecosystem file's value as PM2 reads it:
// an object with apps (or pm2) holding an app or an array of them, a bare
// array of apps, or one app; or a dump's array of processes.
func FromValue(file string, v any) (Source, error) {
	src := Source{File: file}
	if IsDump(file, v) {
		src.Dump = true
		for _, e := range v.([]any) {
			src.Apps = append(src.Apps, e.(*Object))
		}
		return src, nil
	}
	var apps any = v
	if o, ok := v.(*Object); ok && len(o.Keys) == 0 {
		// What a .js file that sets no module.exports gives.
		return Source{}, fmt.Errorf("%s has no apps: its value is an empty object (PM2 reads { apps: [ ... ] }, from module.exports in a .js file)", file)
	}
	if o, ok := v.(*Object); ok {
		for _, key := range []string{"apps", "pm2"} {
			if a, ok := o.Get(key); ok {
				apps = a
				for _, k := range o.Keys {
					if k != key && path.Base(file) != "package.json" {
						src.Keys = append(src.Keys, k)
					}
				}
				break
			}
		}
		if apps == v && path.Base(file) == "package.json" {
			return Source{}, fmt.Errorf("%s has no \"apps\": PM2 reads the apps of a package.json from there", file)
		}
	}
	list, ok := apps.([]any)
	if !ok {
		list = []any{apps}
	}
	for i, e := range list {
		o, ok := e.(*Object)
		if !ok {
			return Source{}, fmt.Errorf("%s: app %d is %s, not an object with name and script", file, i+1, describe(e))
		}
		src.Apps = append(src.Apps, o)
	}
	if len(src.Apps) == 0 {
		return Source{}, fmt.Errorf("%s has no apps", file)
	}
	return src, nil
}
