package resourcequota

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func ctr(req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

// show renders a resource list as sorted name=value pairs.
func show(l corev1.ResourceList) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		v := l[k]
		out = append(out, fmt.Sprintf("%s=%s", k, v.String()))
	}
	return strings.Join(out, " ")
}
