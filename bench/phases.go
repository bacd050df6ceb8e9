package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// phaseVariants are the crash recoveries broken down: bm2's instance (the
// defaults: restart_delay_ms = 100), and beside it the physical limit on
// the same systemd: a hand-written unit running the same app with the
// same RestartSec=, with and without bm2's sandbox, no hook and no probe.
// The rows with restart_delay_ms = 0 (RestartSec=0) compare at PM2's
// setting (its restart_delay defaults to 0), beside PM2 itself.
//
// The last row is the sandboxed unit at RestartSec=0 with one no-op
// ExecStopPost=+/bin/true: what the least a crash record on the restart
// path could be (one process of systemd's, started and waited for
// between the exit and the restart) costs by itself.
var phaseVariants = []struct {
	name, unit string
	port       int
	// Hand-written units: with bm2's sandbox directives, RestartSec=,
	// and lines added to [Service].
	sandboxed    bool
	delay, extra string
}{
	{name: "bm2 (fork mode, 1 instance, defaults)", unit: "bm2@bph-0.service", port: 3740},
	{name: "hand-written unit with bm2's sandbox directives (no hook, no fence, no probe, no wrapper)", unit: "bph-sandboxed.service", port: 3741, sandboxed: true, delay: "100ms"},
	{name: "hand-written unit, no sandbox", unit: "bph-bare.service", port: 3742, delay: "100ms"},
	{name: "bm2, restart_delay_ms = 0", unit: "bm2@bph0-0.service", port: 3743},
	{name: "hand-written unit with bm2's sandbox directives, RestartSec=0", unit: "bph0-sandboxed.service", port: 3744, sandboxed: true, delay: "0"},
	{name: "hand-written unit, no sandbox, RestartSec=0", unit: "bph0-bare.service", port: 3745, delay: "0"},
	{name: "hand-written unit with bm2's sandbox directives, RestartSec=0, one no-op ExecStopPost=+/bin/true", unit: "bph0-hooked.service", port: 3747, sandboxed: true, delay: "0", extra: "ExecStopPost=+/bin/true\n"},
}

// phasePM2 is PM2's row: the same app, fork mode, 1 instance, PM2's
// defaults (restart_delay 0), killed and polled the same way; PM2 logs
// nothing to the journal, so only the total is known.
const phasePM2 = "PM2 (fork mode, 1 instance, defaults: restart_delay 0)"

// phaseUnit is a hand-written unit of the bench app on port, with
// Restart=on-failure and RestartSec=100ms as bm2's defaults, and the
// sandbox directives of units/static/bm2@.service when sandboxed.
func phaseUnit(port int, sandboxed bool) string {
	return phaseUnitDelay(port, sandboxed, "100ms")
}

// phaseUnitDelay is phaseUnit with RestartSec=delay.
func phaseUnitDelay(port int, sandboxed bool, delay string) string {
	u := fmt.Sprintf(`[Service]
Type=exec
Environment=BM2_APP_PORT=%d
WorkingDirectory=/srv/bench
ExecStart=/usr/local/bin/node app.js
Restart=on-failure
RestartSec=%s
DynamicUser=yes
`, port, delay)
	if sandboxed {
		u += `NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
PrivateUsers=yes
PrivateIPC=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallFilter=~@privileged
CPUAccounting=yes
MemoryAccounting=yes
TasksAccounting=yes
`
	}
	return u
}

// phasesUp serves projects bph and bph0 (fork mode, 1 instance; bph0
// with restart_delay_ms = 0) and starts the hand-written units.
const phasesUp = `set -e
install -d -m 0755 /srv/bph /srv/bph0
printf 'name = "bph"\nscript = "/srv/bench/app.js"\ncwd = "/srv/bench"\nruntime = "node"\nexec_mode = "fork"\nport = 3740\n' > /srv/bph/bm2.toml
printf 'name = "bph0"\nscript = "/srv/bench/app.js"\ncwd = "/srv/bench"\nruntime = "node"\nexec_mode = "fork"\nport = 3743\nrestart_delay_ms = 0\n' > /srv/bph0/bm2.toml
cd /srv/bph && bm2 serve >/dev/null
cd /srv/bph0 && bm2 serve >/dev/null
systemctl daemon-reload
systemctl start bph-sandboxed.service bph-bare.service bph0-sandboxed.service bph0-bare.service bph0-hooked.service
for p in 3741 3742 3744 3745 3747; do for i in $(seq 300); do curl -sf -o /dev/null http://127.0.0.1:$p/ && break; sleep 0.05; done; done`

// phasesPM2Up starts the app under PM2 (fork mode, 1 instance) on 3746.
const phasesPM2Up = `cd /srv/bench && pm2 delete bph >/dev/null 2>&1; PORT=3746 pm2 start app.js --name bph >/dev/null && (for i in $(seq 300); do curl -sf -o /dev/null http://127.0.0.1:3746/ && exit 0; sleep 0.05; done; exit 1)`

// phasesPM2Timed kills PM2's worker and polls until a new process
// answers: "K" and "A" as phasesTimed's.
const phasesPM2Timed = `set -e
sleep 1.5
pid=$(pm2 pid bph)
t0=$(date +%s%N)
kill -9 "$pid"
while :; do
	r=$(curl -s --max-time 1 http://127.0.0.1:3746/ 2>/dev/null) || r=
	case "$r" in *"from $pid"*|"") ;; *) break;; esac
	test $(( ($(date +%s%N) - t0) / 1000000 )) -lt 30000 || { echo "no answer in 30 s"; exit 1; }
done
t1=$(date +%s%N)
echo "K $t0"
echo "A $t1"`

// phasesTimed kills the unit's main process and polls its port until a
// new process answers; it prints "K <ns>" (the kill, realtime) and "A
// <ns>" (the answer), then the journal since, as JSON lines.
func phasesTimed(unit string, port int) string {
	return fmt.Sprintf(`set -e
sleep 1.5
pid=$(systemctl show -P MainPID %[1]s)
cur=$(journalctl -q -n 1 --show-cursor -o cat | sed -n 's/^-- cursor: //p')
t0=$(date +%%s%%N)
kill -9 "$pid"
while :; do
	r=$(curl -s --max-time 1 http://127.0.0.1:%[2]d/ 2>/dev/null) || r=
	case "$r" in *"from $pid"*|"") ;; *) break;; esac
	test $(( ($(date +%%s%%N) - t0) / 1000000 )) -lt 30000 || { echo "no answer in 30 s"; exit 1; }
done
t1=$(date +%%s%%N)
echo "K $t0"
echo "A $t1"
sleep 0.3
journalctl --after-cursor="$cur" -o json --output-fields=MESSAGE,UNIT,_SYSTEMD_UNIT`, unit, port)
}

const phasesDown = `cd / && bm2 delete bph >/dev/null 2>&1; bm2 delete bph0 >/dev/null 2>&1; systemctl stop bph-sandboxed.service bph-bare.service bph0-sandboxed.service bph0-bare.service bph0-hooked.service; rm -rf /srv/bph /srv/bph0 /run/systemd/system/bph-*.service /run/systemd/system/bph0-*.service; systemctl daemon-reload`

// phaseNames are the phases of a crash recovery, in order, each ending at
// the journal line (or the answer) it is measured to.
var phaseNames = []string{
	"kill → systemd sees the exit",
	"→ ExecStopPost done (bm2's exit hook)",
	"→ restart scheduled (RestartSec=)",
	"→ start job runs",
	"→ started (ExecStartPre=, sandbox, exec)",
	"→ the app listens (runtime start)",
	"→ answered (the poll)",
}

// phasesOf reads the phase ends of one recovery of unit from the journal
// lines (JSON) and the kill and answer times (ns): one duration (ms) per
// phase, or an error naming the line not found.
func phasesOf(unit string, kill, answer int64, lines []string) ([]float64, error) {
	type entry struct {
		Message string `json:"MESSAGE"`
		Unit    string `json:"UNIT"`
		Sender  string `json:"_SYSTEMD_UNIT"`
		Time    string `json:"__REALTIME_TIMESTAMP"`
	}
	var ends [5]int64 // exited, failed, scheduled, starting, started
	var listen int64
	marks := []string{"Main process exited", "Failed with result", "Scheduled restart job", "Starting ", "Started "}
	for _, l := range lines {
		var e entry
		if json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		us, err := strconv.ParseInt(e.Time, 10, 64)
		if err != nil {
			continue
		}
		ns := us * 1000
		if e.Unit == unit {
			// systemd's lines about a unit start with "<unit>: ", but
			// for Starting and Started.
			msg := strings.TrimPrefix(e.Message, unit+": ")
			for k, m := range marks {
				if ends[k] == 0 && strings.HasPrefix(msg, m) {
					ends[k] = ns
				}
			}
		}
		if e.Sender == unit && listen == 0 && ends[4] != 0 && strings.Contains(e.Message, "listening") {
			listen = ns
		}
	}
	all := append(append([]int64{kill}, ends[:]...), listen, answer)
	out := make([]float64, 0, len(all)-1)
	for k := 1; k < len(all); k++ {
		if all[k] == 0 {
			return nil, fmt.Errorf("%s: no journal line for %q", unit, phaseNames[k-1])
		}
		out = append(out, float64(all[k]-all[k-1])/1e6)
	}
	return out, nil
}

// phases breaks a crash recovery down into its phases from the journal's
// timestamps, for bm2's instance and the hand-written units beside it.
func (r *runner) phases(ctx context.Context) error {
	for _, v := range phaseVariants {
		if strings.HasPrefix(v.unit, "bm2@") {
			continue
		}
		if err := r.bm2.WriteFile("/run/systemd/system/"+v.unit, []byte(phaseUnitDelay(v.port, v.sandboxed, v.delay)+v.extra), 0o644); err != nil {
			return err
		}
	}
	defer r.bm2.sh(context.WithoutCancel(ctx), phasesDown)
	defer r.pm2.sh(context.WithoutCancel(ctx), "pm2 delete bph >/dev/null 2>&1; true")
	r.record("phases", phaseUnit(3741, true)+"   # /run/systemd/system/bph-sandboxed.service (bph-bare.service: the first 8 lines; the bph0-* units: RestartSec=0; bph0-hooked.service: bph0-sandboxed's and ExecStopPost=+/bin/true)",
		phasesUp, phasesTimed("<unit>", 0)+"   # each variant in turn, CrashReps times", phasesPM2Up+"   # PM2's sandbox", phasesPM2Timed, phasesDown)
	if out, err := r.bm2.sh(ctx, phasesUp); err != nil {
		return fmt.Errorf("phases: %w\n%s", err, out)
	}
	if out, err := r.pm2.sh(ctx, phasesPM2Up); err != nil {
		return fmt.Errorf("phases: PM2: %w\n%s", err, out)
	}
	for rep := range r.s.CrashReps {
		out, err := r.pm2.sh(ctx, phasesPM2Timed)
		if err != nil {
			return fmt.Errorf("phases PM2: %w\n%s", err, out)
		}
		if kill, answer := killAnswer(out); kill != 0 && answer != 0 {
			r.sample("phases", phasePM2, "kill to answered (ms)", rep, float64(answer-kill)/1e6)
			r.logf("phases %d/%d PM2: %.0f ms", rep+1, r.s.CrashReps, float64(answer-kill)/1e6)
		}
		for _, v := range phaseVariants {
			out, err := r.bm2.sh(ctx, phasesTimed(v.unit, v.port))
			if err != nil {
				return fmt.Errorf("phases %s: %w\n%s", v.unit, err, out)
			}
			kill, answer := killAnswer(out)
			var lines []string
			for _, l := range strings.Split(out, "\n") {
				if _, _, timing := timingLine(l); !timing {
					lines = append(lines, l)
				}
			}
			ds, err := phasesOf(v.unit, kill, answer, lines)
			if err != nil {
				return err
			}
			total := 0.0
			for k, d := range ds {
				r.sample("phases", v.name, phaseNames[k]+" (ms)", rep, d)
				total += d
			}
			r.sample("phases", v.name, "kill to answered (ms)", rep, total)
			r.logf("phases %d/%d %s: %.0f ms", rep+1, r.s.CrashReps, v.unit, total)
		}
	}
	return nil
}

// killAnswer reads the "K <ns>" and "A <ns>" lines of a timed kill.
func killAnswer(out string) (kill, answer int64) {
	for _, l := range strings.Split(out, "\n") {
		switch kind, ns, ok := timingLine(l); {
		case ok && kind == "K":
			kill = ns
		case ok:
			answer = ns
		}
	}
	return kill, answer
}

// timingLine reads one "K <ns>" or "A <ns>" line.
func timingLine(l string) (kind string, ns int64, ok bool) {
	f := strings.Fields(l)
	if len(f) != 2 || (f[0] != "K" && f[0] != "A") {
		return "", 0, false
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return f[0], n, true
}
