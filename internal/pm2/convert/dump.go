package convert

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A dump.pm2 is what `pm2 save` writes: a JSON array with one object per
// process (an app with 4 instances is 4 objects of the same name), each
// PM2's whole state of it: pm_exec_path, pm_cwd, exec_mode, the keys of
// the app's ecosystem entry, PM2's bookkeeping (pm_id, status, axm_*,
// ...), and env, the process's whole environment, whose every variable is
// also copied to the top level.
//
// That environment is not the app's: PM2 7 builds it (lib/Common.js,
// prepareAppConf) as
//
//	Object.assign({}, process.env of the pm2 command, app.env [, app.env_NAME])
//
// so it holds everything the shell that ran `pm2 start` had exported
// (SSH_AUTH_SOCK, credentials, PATH, ...), then what the ecosystem file
// set. Object keys keep their insertion order, and so does the JSON PM2
// writes. The pm2 command sets PM2_JSON_PROCESSING in its own environment
// right before it reads an ecosystem file, so that variable is the last
// one inherited from the shell, and every variable after it was added by
// the app's env (or env_NAME). That is PM2's mark, and OwnEnv reads it.

// Keys DumpApps sets on the apps it makes, which no PM2 key can be (they
// start with NUL).
const (
	dumpCount   = "\x00instances"
	dumpDropped = "\x00dropped"
	// dumpShellPort: the port variables (portVars) kept from the
	// environment PM2 ran the app with though they are not its own.
	dumpShellPort = "\x00shellport"
)

// dumpMarker is the last variable the pm2 command puts into the
// environment before it reads an ecosystem file.
const dumpMarker = "PM2_JSON_PROCESSING"

// pm2Vars are variables PM2 itself sets for an app: they are PM2's (bm2
// sets BM2_APP_* instead), neither kept nor listed as dropped.
var pm2Vars = map[string]bool{
	"PM2_HOME": true, "PM2_USAGE": true, "PM2_INTERACTOR_PROCESSING": true, dumpMarker: true,
	"PM2_PROGRAMMATIC": true, "PM2_DISCRETE_MODE": true, "PM2_SILENT": true, "PM2_NO_INTERACTION": true,
	"unique_id": true, "pm_id": true, "NODE_APP_INSTANCE": true, "name": true,
}

// OwnEnv is the app's own part of a dump process's environment: its
// variables (in the order PM2 wrote them) and the names of those it left
// out (sorted). A variable is the app's own when
//
//   - it comes after PM2_JSON_PROCESSING in env (the ecosystem file's env
//     and env_NAME added it; see above), or
//   - PM2 kept an env_NAME object that gives it the value it has (the
//     ecosystem's env_production, say, for `pm2 start --env production`),
//     or
//   - its value is a number or a boolean: the shell's environment holds
//     only strings, so the ecosystem file set it.
//
// PM2's own variables (PM2_HOME, PM2_USAGE, unique_id, NODE_APP_INSTANCE
// or the app's instance_var, and the one named after the app, which holds
// its module configuration) are neither kept nor listed. Everything else
// came from the environment of the shell that ran pm2 and is left out.
//
// A variable the shell had already exported and the ecosystem's env set
// again (NODE_ENV, say) keeps the shell's place in env, so it is left out
// too, and listed: the listing is how to find it. An app started without
// an ecosystem file (`pm2 start app.js`) has no mark: only the second and
// third kind are kept, and ok is false.
func OwnEnv(proc *Object) (own *Object, dropped []string, ok bool) {
	own = &Object{Values: map[string]any{}}
	v, _ := proc.Get("env")
	env, isObj := v.(*Object)
	if !isObj {
		return own, nil, true
	}
	name, _ := proc.Get("name")
	appName, _ := name.(string)
	instVar := "NODE_APP_INSTANCE"
	if iv, ok := proc.Get("instance_var"); ok {
		if s, ok := iv.(string); ok && s != "" {
			instVar = s
		}
	}
	marker := -1
	for i, k := range env.Keys {
		if k == dumpMarker {
			marker = i
		}
	}
	fromEnvName := map[string]bool{}
	for _, k := range proc.Keys {
		if !strings.HasPrefix(k, "env_") {
			continue
		}
		eo, ok := proc.Values[k].(*Object)
		if !ok {
			continue
		}
		for _, ek := range eo.Keys {
			a, aok := jsString(eo.Values[ek])
			b, bok := jsString(env.Values[ek])
			if aok && bok && a == b {
				fromEnvName[ek] = true
			}
		}
	}
	for i, k := range env.Keys {
		val := env.Values[k]
		_, isStr := val.(string)
		_, isObj := val.(*Object)
		switch {
		case pm2Vars[k] || k == instVar:
		case k == appName && (isObj || isStr && strings.HasPrefix(val.(string), "{")):
			// PM2's module configuration of the app: an object in PM2
			// 7's dump (pm2 start app.js; pm2 save), JSON text in others'.
		case marker >= 0 && i > marker, fromEnvName[k], !isStr && val != nil:
			own.set(k, val)
		default:
			dropped = append(dropped, k)
		}
	}
	sort.Strings(dropped)
	return own, dropped, marker >= 0
}

// dumpState are the keys of a dump process that are PM2's bookkeeping,
// not settings of the app.
var dumpState = map[string]bool{
	"pm_id": true, "pm_cwd": true, "pm_exec_path": true, "pm_out_log_path": true, "pm_err_log_path": true,
	"pm_log_path": true, "pm_pid_path": true, "pm_uptime": true, "created_at": true, "restart_time": true,
	"unstable_restarts": true, "status": true, "unique_id": true, "axm_actions": true, "axm_monitor": true,
	"axm_options": true, "axm_dynamic": true, "km_link": true, "vizion_running": true, "node_version": true,
	"version": true, "prev_restart_delay": true, "exit_code": true, "versioning": true, "_pm2_version": true,
	"pmx_module": true, "env": true, "username": true, "command": true,
}

// DumpApps turns a dump's processes into one app per name, in the order
// of their first process, with the keys an ecosystem entry would have:
// script (pm_exec_path), cwd (pm_cwd), instances (how many processes),
// env (OwnEnv), and every PM2 key the app set (a key at the value PM2
// writes for every app is left out). It also returns notes about the dump.
func DumpApps(procs []*Object) ([]*Object, []string) {
	var order []string
	byName := map[string][]*Object{}
	var notes []string
	for i, p := range procs {
		n, _ := p.Get("name")
		name, _ := n.(string)
		if name == "" {
			name = fmt.Sprintf("process %d", i+1)
		}
		if _, ok := byName[name]; !ok {
			order = append(order, name)
		}
		byName[name] = append(byName[name], p)
	}
	var apps []*Object
	for _, name := range order {
		group := byName[name]
		first := group[0]
		app := &Object{Values: map[string]any{}}
		if n, ok := first.Get("name"); ok {
			app.set("name", n)
		}
		if v, ok := first.Get("pm_exec_path"); ok {
			app.Values["pm_exec_path"] = v // not a key of the app: no note
		}
		if v, ok := first.Get("pm_cwd"); ok {
			app.set("cwd", v)
		}
		app.Values[dumpCount] = jsonInt(len(group))
		// Its settings: every key of the schema, unless at PM2's default.
		for _, k := range first.Keys {
			if dumpState[k] || strings.HasPrefix(k, "env_") || k == "name" || k == "instances" {
				continue
			}
			r, ok := ruleFor(k)
			if !ok {
				continue // a copy of an env variable, or PM2's state
			}
			v := first.Values[k]
			if r.Default != "" && compactJSON(v) == r.Default {
				continue
			}
			if k == "node_args" || k == "args" {
				if list, ok := v.([]any); ok && len(list) == 0 {
					continue
				}
			}
			app.set(k, v)
		}
		proc := lowestIncrement(group)
		own, dropped, marked := OwnEnv(proc)
		label := name
		set := len(own.Keys)
		// The port the app listened on is in the environment PM2 ran it
		// with, whoever set it: `PORT=8005 pm2 start app.js` leaves it
		// in the shell's part of env only.
		e, _ := proc.Get("env")
		all, _ := e.(*Object)
		var shell []string
		for _, pv := range portVars {
			if v, ok := all.Get(pv); ok && v != nil && !own.Has(pv) {
				own.set(pv, v)
				dropped = slices.DeleteFunc(dropped, func(d string) bool { return d == pv })
				shell = append(shell, pv)
			}
		}
		app.set("env", own)
		app.Values[dumpDropped] = dropped
		app.Values[dumpShellPort] = shell
		if !marked {
			port := ""
			if len(shell) > 0 {
				port = " and env." + strings.Join(shell, ", env.") + " for the port"
			}
			notes = append(notes, fmt.Sprintf("%s: was started without an ecosystem file, so the dump does not say which variables are its own: kept only those PM2 shows it set (%d)%s, left out %d; add what it needs to [env]",
				label, set, port, len(dropped)))
		}
		if st, ok := first.Get("status"); ok {
			if s, _ := st.(string); s != "" && s != "online" {
				notes = append(notes, fmt.Sprintf("%s: was %s under PM2; `bm2 serve` starts it", label, s))
			}
		}
		apps = append(apps, app)
	}
	return apps, notes
}

// lowestIncrement is the process of a group that holds the first value of
// the app's increment_var (its port, when that is PORT): the process with
// the lowest value, or the first.
func lowestIncrement(group []*Object) *Object {
	best := group[0]
	iv, _ := best.Get("increment_var")
	name, _ := iv.(string)
	if name == "" {
		return best
	}
	val := func(p *Object) (int, bool) {
		e, _ := p.Get("env")
		eo, _ := e.(*Object)
		s, ok := jsString(valueOf(eo, name))
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(s)
		return n, err == nil
	}
	bv, bok := val(best)
	for _, p := range group[1:] {
		if v, ok := val(p); ok && (!bok || v < bv) {
			best, bv, bok = p, v, true
		}
	}
	return best
}

func valueOf(o *Object, k string) any {
	if o == nil {
		return nil
	}
	return o.Values[k]
}

func jsonInt(n int) any { return jsonNumber(strconv.Itoa(n)) }

// IsDump tells whether a decoded JSON value is a dump.pm2: an array of
// objects that carry PM2's pm_exec_path.
func IsDump(file string, v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	if len(list) == 0 {
		return path.Ext(file) == ".pm2"
	}
	for _, e := range list {
		o, ok := e.(*Object)
		if !ok || !o.Has("pm_exec_path") {
			return false
		}
	}
	return true
}
