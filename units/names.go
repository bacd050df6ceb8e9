package units

import (
	"fmt"
	"strconv"
	"strings"
)

// Escape escapes s for use as one component of a unit name, as
// systemd-escape(1) does: "-" (hierarchy in slice names) and every byte
// outside [A-Za-z0-9:_.] become \xNN, "/" becomes "-".
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '/':
			b.WriteByte('-')
		case c == '.' && i == 0,
			!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':' || c == '_' || c == '.'):
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Slice is the project's slice, a child of bm2.slice.
func Slice(project string) string { return "bm2-" + Escape(project) + ".slice" }

// Target is the project's target, which wants every instance.
func Target(project string) string { return "bm2-" + project + ".target" }

// InstanceID is the template instance string, "<project>-<i>".
func InstanceID(project string, i int) string { return project + "-" + strconv.Itoa(i) }

// Instance is the full unit name of instance i, "bm2@<project>-<i>.service".
func Instance(project string, i int) string {
	return "bm2@" + InstanceID(project, i) + ".service"
}

// Probe is the reusePort probe of instance i, "bm2-probe@<project>-<i>.service".
func Probe(project string, i int) string {
	return "bm2-probe@" + InstanceID(project, i) + ".service"
}

// ParseInstance splits "api-0", "bm2@api-0" or "bm2@api-0.service" into the
// project name and the index.
func ParseInstance(s string) (project string, index int, ok bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "bm2@"), ".service")
	dash := strings.LastIndexByte(s, '-')
	if dash <= 0 || dash == len(s)-1 {
		return "", 0, false
	}
	digits := s[dash+1:]
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", 0, false
		}
	}
	if len(digits) > 1 && digits[0] == '0' {
		return "", 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return "", 0, false
	}
	return s[:dash], n, true
}
