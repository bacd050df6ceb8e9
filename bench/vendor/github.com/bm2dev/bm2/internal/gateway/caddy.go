package gateway

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// caddy renders the model as Caddyfile site blocks, indented with tabs as
// caddy fmt does.
func (m *model) caddy() []byte {
	m.kind = KindCaddy
	var b bytes.Buffer
	line := func(indent int, s string) {
		if s != "" {
			b.WriteString(strings.Repeat("\t", indent))
			b.WriteString(s)
		}
		b.WriteByte('\n')
	}
	comment := func(indent int, lines ...string) {
		for _, l := range lines {
			line(indent, "# "+l)
		}
	}
	comment(0, m.header("a Caddyfile site block")...)

	proxy := func(indent int, u upstream) {
		line(indent, "reverse_proxy {")
		for _, s := range u.servers {
			line(indent+1, "to "+s)
		}
		line(indent+1, "lb_policy round_robin")
		comment(indent+1,
			"A connection refused (an instance restarting in bm2 reload) or a",
			"host that does not answer: choose again, every "+caddyTryInterval+", for up to "+caddyTryDuration+".")
		line(indent+1, "lb_try_duration "+caddyTryDuration)
		line(indent+1, "lb_try_interval "+caddyTryInterval)
		if m.fleet && u.retries() {
			comment(indent+1,
				fmt.Sprintf("Skip a host after %d failures for %s, less than lb_try_duration: a", fleetMaxFails, fleetFailTimeout),
				"request that finds every upstream marked waits for a mark to expire.")
			line(indent+1, "fail_duration "+fleetFailTimeout)
			line(indent+1, "max_fails "+strconv.Itoa(fleetMaxFails))
		}
		line(indent+1, "header_up X-Real-IP {remote_host}")
		line(indent+1, "transport http {")
		line(indent+2, "dial_timeout "+connectTimeout)
		comment(indent+2, "Close idle connections before the app does (Node.js: after 5 s).")
		line(indent+2, "keepalive "+keepaliveTimeout)
		line(indent+1, "}")
		line(indent, "}")
	}

	site := func(locations []upstream) {
		line(0, "")
		if m.prefix == "" {
			comment(0, m.describe(locations[0])...)
		}
		line(0, m.siteAddress()+" {")
		if m.listen.addr != "" {
			line(1, "bind "+strings.Trim(m.listen.addr, "[]"))
		}
		if m.prefix == "" {
			proxy(1, locations[0])
		}
		for i, u := range locations {
			if m.prefix == "" {
				break
			}
			if i > 0 {
				line(0, "")
			}
			comment(1, m.describe(u)...)
			matcher := "@" + u.name
			line(1, matcher+" path "+u.path+"*")
			line(1, "redir "+strings.TrimSuffix(u.path, "/")+" "+u.path+" 301")
			line(1, "handle "+matcher+" {")
			proxy(2, u)
			line(1, "}")
		}
		if m.prefix != "" {
			line(0, "")
			line(1, "handle {")
			line(2, "respond 404")
			line(1, "}")
		}
		line(0, "}")
	}
	if m.prefix != "" {
		site(m.upstreams)
	} else {
		for _, u := range m.upstreams {
			site([]upstream{u})
		}
	}
	return b.Bytes()
}

// siteAddress is the site block's address: plain HTTP on the listen port,
// for the server names or for any host.
func (m *model) siteAddress() string {
	port := ":" + strconv.Itoa(m.listen.port)
	if len(m.names) == 0 {
		return "http://" + port
	}
	addrs := make([]string, len(m.names))
	for i, n := range m.names {
		addrs[i] = "http://" + n + port
	}
	return strings.Join(addrs, ", ")
}
