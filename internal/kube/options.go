package kube

import (
	"errors"
	"net/netip"
	"regexp"
	"strings"
	"sync"

	"github.com/bm2dev/bm2/internal/gateway"
	"k8s.io/apimachinery/pkg/util/validation"
)

// options are Options, checked.
type options struct {
	Options
	gateway   gatewayRef
	hostnames []string
	prefix    string // normalized as package gateway does: "", "/" or "/apps/"
}

type gatewayRef struct{ namespace, name string }

// maxHostnames is the most hostnames an HTTPRoute takes (its CRD's
// maxItems).
const maxHostnames = 16

// checkOptions checks every option and reports all that cannot be used.
// image: the image is needed (the whole export, not only routes).
func checkOptions(opts Options, image bool) (options, error) {
	o := options{Options: opts}
	var errs []error
	bad := func(option, value, reason string) {
		errs = append(errs, &OptionError{Option: option, Value: value, Reason: reason})
	}
	switch {
	case !image:
	case opts.Image == "":
		bad("image", "", "required: the image that holds the app at its cwd and its runtime, e.g. --image registry.example.com/api:1.0 (bm2 cannot name one: no public image has your app in it)")
	case !validImage(opts.Image):
		bad("image", opts.Image, "not an image reference (like registry.example.com/team/api:1.0 or api@sha256:...)")
	}
	if opts.Namespace != "" {
		if msgs := validation.IsDNS1123Label(opts.Namespace); len(msgs) > 0 {
			bad("namespace", opts.Namespace, "not a namespace name: "+strings.Join(msgs, "; "))
		}
	}
	if opts.Gateway != "" {
		ns, name, scoped := strings.Cut(opts.Gateway, "/")
		if !scoped {
			ns, name = "", opts.Gateway
		}
		switch {
		case scoped && len(validation.IsDNS1123Label(ns)) > 0:
			bad("gateway", opts.Gateway, "want NAME or NAMESPACE/NAME: "+ns+" is not a namespace name")
		case len(validation.IsDNS1123Subdomain(name)) > 0:
			bad("gateway", opts.Gateway, "want NAME or NAMESPACE/NAME: "+strings.Join(validation.IsDNS1123Subdomain(name), "; "))
		default:
			o.gateway = gatewayRef{namespace: ns, name: name}
		}
	}
	if opts.Gateway == "" && (len(opts.Hostnames) > 0 || opts.PathPrefix != "") {
		bad("server-name", "", "--server-name and --path-prefix shape the HTTPRoute: they need --gateway NAME")
	}
	seen := map[string]bool{}
	for _, h := range opts.Hostnames {
		err := gateway.CheckServerName(h)
		lower := strings.ToLower(h)
		switch {
		case err != nil:
			errs = append(errs, err)
		case isIP(h):
			bad("server-name", h, "an HTTPRoute's hostnames are DNS names, not IP addresses")
		case seen[lower]:
			bad("server-name", h, "given twice")
		default:
			seen[lower] = true
			o.hostnames = append(o.hostnames, lower) // the CRD takes lower case only
		}
	}
	if len(o.hostnames) > maxHostnames {
		bad("server-name", "", "an HTTPRoute takes at most 16 hostnames")
	}
	if opts.PathPrefix != "" {
		p, err := gateway.ParsePathPrefix(opts.PathPrefix)
		if err != nil {
			errs = append(errs, err)
		}
		o.prefix = p
	}
	return o, errors.Join(errs...)
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return err == nil
}

// imageRE is an image reference as container runtimes read it (the
// grammar of distribution's reference package): an optional registry
// host and port, path components of lower-case letters and digits with
// separators, an optional tag, an optional digest. Compiled when first
// used (bm2 export), not at every start of bm2.
var imageRE = sync.OnceValue(func() *regexp.Regexp {
	const (
		alnum      = `[a-z0-9]+`
		sep        = `(?:[._]|__|-+)`
		component  = alnum + `(?:` + sep + alnum + `)*`
		domainPart = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		domain     = `(?:` + domainPart + `(?:\.` + domainPart + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
		tag        = `[\w][\w.-]{0,127}`
		digest     = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^(?:` + domain + `/)?` + component + `(?:/` + component + `)*(?::` + tag + `)?(?:@` + digest + `)?$`)
})

func validImage(s string) bool {
	name, _, _ := strings.Cut(s, "@")
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name = name[:i]
	}
	return len(name) <= 255 && imageRE().MatchString(s)
}
