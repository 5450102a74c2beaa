package networking

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

func dnsSubdomain(s string) []string { return content.IsDNS1123Subdomain(s) }

// pathSegmentName: a name usable as one URL path segment.
func pathSegmentName(name string) []string {
	switch name {
	case ".", "..":
		return []string{`may not be '` + name + `'`}
	}
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(name, bad) {
			return []string{`may not contain '` + bad + `'`}
		}
	}
	return nil
}
