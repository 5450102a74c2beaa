package cel

import (
	"encoding/base64"
	"regexp"
	"strings"
	"time"

	"k8s.io/kube-openapi/pkg/validation/strfmt"

	"github.com/skiff-sh/skiff/pkg/registry/customresource/structural"
)

// Property names are escaped as upstream's CEL environment does, so that
// every declared property is reachable as a field: CEL keywords become
// __keyword__ (self.__namespace__), and "__", ".", "-" and "/" become
// __underscores__, __dot__, __dash__ and __slash__. Names that cannot be
// escaped are not reachable. Keys of additionalProperties maps are not
// escaped (they are map keys: self["a.b"]).

var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true,
	"void": true, "while": true,
}

var escapable = regexp.MustCompile(`^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$`)

var escaper = strings.NewReplacer("__", "__underscores__", ".", "__dot__", "-", "__dash__", "/", "__slash__")

// escape returns the CEL field name of a property, or false.
func escape(name string) (string, bool) {
	if celReserved[name] {
		return "__" + name + "__", true
	}
	if !escapable.MatchString(name) {
		return "", false
	}
	return escaper.Replace(name), true
}

// unescape returns the property a CEL field name refers to.
func unescape(n *structural.Node, field string) (*structural.Node, bool) {
	if p, ok := n.Props[field]; ok {
		if e, _ := escape(field); e == field {
			return p, true
		}
	}
	for name, p := range n.Props {
		if e, ok := escape(name); ok && e == field {
			return p, true
		}
	}
	return nil, false
}

// toCEL copies a decoded JSON value for evaluation, escaping the property
// names of objects with declared properties and, as upstream, turning
// strings of format date-time into timestamps, of format duration into
// durations and of format byte into bytes.
func toCEL(x any, n *structural.Node) any {
	switch v := x.(type) {
	case string:
		if n == nil {
			return v
		}
		switch n.Format {
		case "date-time":
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return t
			}
		case "duration":
			if d, err := strfmt.ParseDuration(v); err == nil {
				return d
			}
		case "byte":
			if b, err := base64.StdEncoding.DecodeString(v); err == nil {
				return b
			}
		}
		return v
	case map[string]any:
		if n == nil || len(n.Props) == 0 {
			if n != nil && n.Additional != nil {
				out := make(map[string]any, len(v))
				for k, e := range v {
					out[k] = toCEL(e, n.Additional)
				}
				return out
			}
			return v
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			p := n.Props[k]
			if p == nil {
				if n.Additional != nil {
					out[k] = toCEL(e, n.Additional)
				} else if name, ok := escape(k); ok {
					out[name] = e // preserved unknown field
				}
				continue
			}
			if name, ok := escape(k); ok {
				out[name] = toCEL(e, p)
			}
		}
		return out
	case []any:
		if n == nil || n.Items == nil || !needsConversion(n.Items) {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = toCEL(e, n.Items)
		}
		return out
	}
	return x
}

// needsConversion reports whether values of n can contain escaped names
// or formatted strings.
func needsConversion(n *structural.Node) bool {
	if n == nil {
		return false
	}
	switch n.Format {
	case "date-time", "duration", "byte":
		return true
	}
	for k, p := range n.Props {
		if e, _ := escape(k); e != k || needsConversion(p) {
			return true
		}
	}
	return needsConversion(n.Items) || needsConversion(n.Additional)
}
