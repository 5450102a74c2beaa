package volume

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// downwardPayload is the payload of downwardAPI items, as upstream's
// downwardapi.CollectData (errors of every item joined).
func (m *Manager) downwardPayload(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, defaultMode *int32) (map[string]fileProjection, []error) {
	out := map[string]fileProjection{}
	var errs []error
	for _, it := range items {
		f := fileProjection{Mode: modeOr(it.Mode, defaultMode, corev1.DownwardAPIVolumeSourceDefaultMode)}
		switch {
		case it.FieldRef != nil:
			v, err := fieldPathValue(pod, it.FieldRef.FieldPath)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			f.Data = []byte(v)
		case it.ResourceFieldRef != nil:
			v, err := resourceFieldValue(it.ResourceFieldRef, pod, m.cfg.NodeAllocatable)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			f.Data = []byte(v)
		}
		out[filepath.Clean(it.Path)] = f
	}
	return out, errs
}

func modeOr(mode, defaultMode *int32, def int32) int32 {
	if mode != nil {
		return *mode
	}
	if defaultMode != nil {
		return *defaultMode
	}
	return def
}

// fieldPathValue is upstream's fieldpath.ExtractFieldPathAsString over a
// pod's metadata (what a downwardAPI volume may reference).
func fieldPathValue(pod *corev1.Pod, path string) (string, error) {
	if p, sub, ok := splitSubscript(path); ok {
		switch p {
		case "metadata.annotations":
			return pod.Annotations[sub], nil
		case "metadata.labels":
			return pod.Labels[sub], nil
		default:
			return "", fmt.Errorf("fieldPath %q does not support subscript", path)
		}
	}
	switch path {
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", path)
}

// splitSubscript splits "metadata.labels['x']" into its path and key.
func splitSubscript(path string) (string, string, bool) {
	i := strings.Index(path, "[")
	if i < 0 || !strings.HasSuffix(path, "]") {
		return "", "", false
	}
	sub := path[i+1 : len(path)-1]
	if len(sub) < 2 || sub[0] != '\'' || sub[len(sub)-1] != '\'' {
		return "", "", false
	}
	return path[:i], sub[1 : len(sub)-1], true
}

// formatMap renders labels or annotations as upstream's fieldpath.FormatMap:
// key="value" lines, sorted by key.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%v=%q", k, m[k])
	}
	return b.String()
}

// resourceFieldValue is upstream's
// ExtractResourceValueByContainerNameAndNodeAllocatable: the container's
// request or limit in units of the divisor, rounded up; an unset limit is
// the node's allocatable.
func resourceFieldValue(fs *corev1.ResourceFieldSelector, pod *corev1.Pod, allocatable corev1.ResourceList) (string, error) {
	var c *corev1.Container
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if c == nil && list[i].Name == fs.ContainerName {
				c = &list[i]
			}
		}
	}
	if c == nil {
		return "", fmt.Errorf("container %s not found", fs.ContainerName)
	}
	divisor := fs.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	// Upstream's MergeContainerResourceLimits: an unset or zero cpu,
	// memory or ephemeral-storage limit is the node's allocatable.
	limit := func(name corev1.ResourceName) resource.Quantity {
		if q, ok := c.Resources.Limits[name]; ok && !q.IsZero() {
			return q
		}
		return allocatable[name]
	}
	request := func(name corev1.ResourceName) resource.Quantity { return c.Resources.Requests[name] }
	switch fs.Resource {
	case "limits.cpu":
		return cpuString(limit(corev1.ResourceCPU), divisor), nil
	case "limits.memory":
		return bytesString(limit(corev1.ResourceMemory), divisor), nil
	case "limits.ephemeral-storage":
		return bytesString(limit(corev1.ResourceEphemeralStorage), divisor), nil
	case "requests.cpu":
		return cpuString(request(corev1.ResourceCPU), divisor), nil
	case "requests.memory":
		return bytesString(request(corev1.ResourceMemory), divisor), nil
	case "requests.ephemeral-storage":
		return bytesString(request(corev1.ResourceEphemeralStorage), divisor), nil
	}
	if strings.HasPrefix(fs.Resource, "limits.hugepages-") {
		return bytesString(c.Resources.Limits[corev1.ResourceName(strings.TrimPrefix(fs.Resource, "limits."))], divisor), nil
	}
	if strings.HasPrefix(fs.Resource, "requests.hugepages-") {
		return bytesString(request(corev1.ResourceName(strings.TrimPrefix(fs.Resource, "requests."))), divisor), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
}

func cpuString(q, divisor resource.Quantity) string {
	return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10)
}

func bytesString(q, divisor resource.Quantity) string {
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10)
}
