package volume

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Mounts are the CRI mounts of container c of pod (whose volumes SetUp
// set up), with the $(VAR) references of subPathExpr expanded from the
// container's literal env values and its fieldRefs to the pod's metadata
// and spec; MountsEnv takes the fully resolved environment (what the
// kubelet passes).
func (m *Manager) Mounts(pod *corev1.Pod, c *corev1.Container) ([]*runtimeapi.Mount, error) {
	return m.MountsEnv(pod, c, simpleEnv(pod, c))
}

// MountsEnv is Mounts with the container's environment given.
func (m *Manager) MountsEnv(pod *corev1.Pod, c *corev1.Container, env map[string]string) ([]*runtimeapi.Mount, error) {
	if len(c.VolumeMounts) == 0 {
		return nil, nil
	}
	m.mu.Lock()
	ps := m.pods[pod.UID]
	m.mu.Unlock()
	vols := map[string]*volState{}
	if ps != nil {
		ps.mu.Lock()
		for k, v := range ps.vols {
			vols[k] = v
		}
		ps.mu.Unlock()
	}
	var out []*runtimeapi.Mount
	for _, vm := range c.VolumeMounts {
		vs := vols[vm.Name]
		if vs == nil {
			return nil, fmt.Errorf("cannot find volume %q to mount into container %q", vm.Name, c.Name)
		}
		hostPath := vs.path
		subPath := vm.SubPath
		if vm.SubPathExpr != "" {
			var err error
			if subPath, err = expandSubPath(vm.SubPathExpr, env); err != nil {
				return nil, err
			}
		}
		if subPath != "" {
			p, err := subPathHostPath(vs.path, subPath, vm.Name, c.Name)
			if err != nil {
				return nil, err
			}
			hostPath = p
		}
		prop, err := propagation(vm.MountPropagation)
		if err != nil {
			return nil, err
		}
		readOnly := vm.ReadOnly || vs.readOnly
		mt := &runtimeapi.Mount{ContainerPath: vm.MountPath, HostPath: hostPath, Readonly: readOnly, Propagation: prop}
		if readOnly && vm.RecursiveReadOnly != nil && *vm.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled {
			mt.RecursiveReadOnly = true
		}
		out = append(out, mt)
	}
	return out, nil
}

// subPathHostPath resolves subPath inside the volume at volPath: it must
// be relative without "..", may not lead out of the volume through a
// symlink, and is made (with the volume's mode) when missing, as upstream
// does before bind-mounting it; the errors are upstream's (which do not
// tell the host's layout). A symlink (a configMap key) resolves to its
// target, so that such a mount, as upstream's, does not see updates.
func subPathHostPath(volPath, subPath, volume, container string) (string, error) {
	if filepath.IsAbs(subPath) {
		return "", fmt.Errorf("error SubPath `%s` must not be an absolute path", subPath)
	}
	for _, part := range strings.Split(subPath, "/") {
		if part == ".." {
			return "", fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", subPath)
		}
	}
	prepareErr := fmt.Errorf("failed to prepare subPath for volumeMount %q of container %q", volume, container)
	root, err := filepath.EvalSymlinks(volPath)
	if err != nil {
		return "", prepareErr
	}
	full := filepath.Join(volPath, subPath)
	if _, err := os.Lstat(full); os.IsNotExist(err) {
		fi, err := os.Stat(root)
		if err != nil {
			return "", err
		}
		// Make it only if its existing part stays in the volume.
		parent := filepath.Dir(full)
		for {
			if _, err := os.Lstat(parent); err == nil {
				break
			}
			parent = filepath.Dir(parent)
		}
		if r, err := filepath.EvalSymlinks(parent); err != nil || !within(r, root) {
			return "", fmt.Errorf("failed to create subPath directory for volumeMount %q of container %q", volume, container)
		}
		if err := os.MkdirAll(full, fi.Mode().Perm()); err != nil {
			return "", fmt.Errorf("failed to create subPath directory for volumeMount %q of container %q", volume, container)
		}
	}
	resolved, err := filepath.EvalSymlinks(full)
	if err != nil || !within(resolved, root) {
		return "", prepareErr
	}
	return resolved, nil
}

func within(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// expandSubPath is upstream's ExpandContainerVolumeMounts: an unset or
// empty variable is an error.
func expandSubPath(expr string, env map[string]string) (string, error) {
	var missing []string
	probe := map[string]string{}
	for _, name := range referencedVars(expr) {
		if v, ok := env[name]; ok && v != "" {
			probe[name] = v
		} else if !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("missing value for %s", strings.Join(missing, ", "))
	}
	return expand(expr, probe), nil
}

// referencedVars are the $(VAR) names expr refers to (not $$-escaped).
func referencedVars(expr string) []string {
	var out []string
	for i := 0; i+1 < len(expr); i++ {
		if expr[i] != '$' {
			continue
		}
		switch expr[i+1] {
		case '$':
			i++
		case '(':
			end := strings.IndexByte(expr[i+2:], ')')
			if end < 0 {
				return out
			}
			out = append(out, expr[i+2:i+2+end])
			i += 2 + end
		}
	}
	return out
}

func propagation(p *corev1.MountPropagationMode) (runtimeapi.MountPropagation, error) {
	switch {
	case p == nil, *p == corev1.MountPropagationNone:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	case *p == corev1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, nil
	case *p == corev1.MountPropagationBidirectional:
		// (validation allows it to privileged containers only)
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, nil
	}
	return 0, fmt.Errorf("invalid MountPropagation mode: %q", *p)
}

// simpleEnv is the part of a container's environment the volume manager
// can resolve alone: literal values and fieldRefs to the pod.
func simpleEnv(pod *corev1.Pod, c *corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = expand(e.Value, env)
		case e.ValueFrom.FieldRef != nil:
			if v, ok := podField(pod, e.ValueFrom.FieldRef.FieldPath); ok {
				env[e.Name] = v
			}
		}
	}
	return env
}

func podField(pod *corev1.Pod, path string) (string, bool) {
	if v, err := fieldPathValue(pod, path); err == nil {
		return v, true
	}
	switch path {
	case "spec.nodeName":
		return pod.Spec.NodeName, true
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, true
	case "status.hostIP":
		return pod.Status.HostIP, true
	case "status.podIP":
		return pod.Status.PodIP, true
	}
	return "", false
}

// expand replaces $(VAR) with env's value as upstream's expansion
// package: "$$" is a literal "$", an unknown $(VAR) stays as written.
func expand(s string, env map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
