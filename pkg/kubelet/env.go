package kubelet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Lookups is how the config builders read the cluster objects a pod
// refers to. Secrets and ConfigMaps are read through the kubelet's
// client (the Node authorizer lets a kubelet read only those of pods bound
// to it); Services come from an informer's cache.
type Lookups struct {
	ConfigMap func(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret    func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// Services lists the services of a namespace. Nil: no service
	// environment variables (upstream's kubelet without an API server).
	Services func(namespace string) ([]*corev1.Service, error)
	// ServicesSynced reports whether the services have been listed once
	// (nil: always).
	ServicesSynced func() bool
	// RuntimeClass reads a RuntimeClass (its handler goes to the
	// runtime); nil: every pod runs with the runtime's default handler.
	RuntimeClass func(ctx context.Context, name string) (*nodev1.RuntimeClass, error)
}

// envVar is one resolved environment variable.
type envVar struct{ Name, Value string }

// masterServiceNamespace holds the services every pod sees in its
// environment whatever enableServiceLinks says.
const masterServiceNamespace = "default"

var masterServices = map[string]bool{"kubernetes": true}

// serviceEnv is the service environment of a pod of namespace ns, as
// upstream's getServiceEnvVarMap: the master service "kubernetes" of the
// default namespace always, the services of ns too when
// enableServiceLinks; services without a cluster IP are skipped.
func serviceEnv(lookups Lookups, ns string, enableServiceLinks bool) ([]envVar, error) {
	if lookups.Services == nil {
		return nil, nil
	}
	all, err := lookups.Services(ns)
	if err == nil && ns != masterServiceNamespace {
		var master []*corev1.Service
		master, err = lookups.Services(masterServiceNamespace)
		all = append(master, all...)
	}
	if err != nil {
		return nil, errors.New("failed to list services when setting up env vars")
	}
	byName := map[string]*corev1.Service{}
	for _, s := range all {
		if !serviceIPSet(s) {
			continue
		}
		switch {
		case s.Namespace == masterServiceNamespace && masterServices[s.Name]:
			if _, ok := byName[s.Name]; !ok {
				byName[s.Name] = s
			}
		case s.Namespace == ns && enableServiceLinks:
			byName[s.Name] = s
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []envVar
	for _, n := range names {
		out = append(out, serviceEnvVars(byName[n])...)
	}
	return out, nil
}

func serviceIPSet(s *corev1.Service) bool {
	return s.Spec.ClusterIP != corev1.ClusterIPNone && s.Spec.ClusterIP != ""
}

// envName makes a service or port name an environment variable name.
func envName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// serviceEnvVars are the variables of one service, as upstream's
// envvars.FromServices: FOO_SERVICE_HOST, FOO_SERVICE_PORT (first port),
// FOO_SERVICE_PORT_<NAME> per named port, and the docker link variables.
func serviceEnvVars(s *corev1.Service) []envVar {
	prefix := envName(s.Name)
	out := []envVar{{prefix + "_SERVICE_HOST", s.Spec.ClusterIP}}
	if len(s.Spec.Ports) == 0 {
		return out
	}
	out = append(out, envVar{prefix + "_SERVICE_PORT", strconv.Itoa(int(s.Spec.Ports[0].Port))})
	for _, p := range s.Spec.Ports {
		if p.Name != "" {
			out = append(out, envVar{prefix + "_SERVICE_PORT_" + envName(p.Name), strconv.Itoa(int(p.Port))})
		}
	}
	for i, p := range s.Spec.Ports {
		proto := string(corev1.ProtocolTCP)
		if p.Protocol != "" {
			proto = string(p.Protocol)
		}
		lower := strings.ToLower(proto)
		hostPort := net.JoinHostPort(s.Spec.ClusterIP, strconv.Itoa(int(p.Port)))
		if i == 0 {
			out = append(out, envVar{prefix + "_PORT", lower + "://" + hostPort})
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(proto))
		out = append(out, envVar{pp, lower + "://" + hostPort}, envVar{pp + "_PROTO", lower},
			envVar{pp + "_PORT", strconv.Itoa(int(p.Port))}, envVar{pp + "_ADDR", s.Spec.ClusterIP})
	}
	return out
}

// envInput is what resolving a container's environment needs besides the
// pod and container.
type envInput struct {
	Lookups Lookups
	// PodIPs of the pod's sandbox (first the primary).
	PodIPs []string
	// HostIPs of the node.
	HostIPs []string
	// Allocatable of the node: limits a container does not set read as
	// the node's allocatable (resourceFieldRef), as upstream's.
	Allocatable corev1.ResourceList
}

// envList keeps variables in first-declaration order with last-write wins.
type envList struct {
	order []string
	vals  map[string]string
}

func (l *envList) set(k, v string) {
	if l.vals == nil {
		l.vals = map[string]string{}
	}
	if _, ok := l.vals[k]; !ok {
		l.order = append(l.order, k)
	}
	l.vals[k] = v
}

// makeEnvironment resolves the environment of container c of pod as
// upstream's makeEnvironmentVariables: envFrom first (later sources win),
// then env in order (its $(VAR) references expanded against the
// variables so far and the service variables), then the service
// variables not set otherwise. Upstream's order is a map's; ours is
// declaration order, then the services sorted by name.
func makeEnvironment(ctx context.Context, pod *corev1.Pod, c *corev1.Container, in envInput) ([]envVar, error) {
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	if in.Lookups.Services != nil && in.Lookups.ServicesSynced != nil && !in.Lookups.ServicesSynced() {
		return nil, errors.New("services have not yet been read at least once, cannot construct envvars")
	}
	svcEnv, err := serviceEnv(in.Lookups, pod.Namespace, links)
	if err != nil {
		return nil, err
	}
	svcMap := make(map[string]string, len(svcEnv))
	for _, e := range svcEnv {
		svcMap[e.Name] = e.Value
	}
	configMaps := map[string]*corev1.ConfigMap{}
	secrets := map[string]*corev1.Secret{}
	getCM := func(name string) (*corev1.ConfigMap, error) {
		if cm, ok := configMaps[name]; ok {
			return cm, nil
		}
		if in.Lookups.ConfigMap == nil {
			return nil, fmt.Errorf("couldn't get configMap %v/%v, no kubeClient defined", pod.Namespace, name)
		}
		cm, err := in.Lookups.ConfigMap(ctx, pod.Namespace, name)
		if err != nil {
			return nil, err
		}
		configMaps[name] = cm
		return cm, nil
	}
	getSecret := func(name string) (*corev1.Secret, error) {
		if s, ok := secrets[name]; ok {
			return s, nil
		}
		if in.Lookups.Secret == nil {
			return nil, fmt.Errorf("couldn't get secret %v/%v, no kubeClient defined", pod.Namespace, name)
		}
		s, err := in.Lookups.Secret(ctx, pod.Namespace, name)
		if err != nil {
			return nil, err
		}
		secrets[name] = s
		return s, nil
	}
	env := envList{vals: map[string]string{}}
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm, err := getCM(from.ConfigMapRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(from.ConfigMapRef.Optional) {
					continue
				}
				return nil, err
			}
			for _, k := range sortedKeys(cm.Data) {
				env.set(from.Prefix+k, cm.Data[k])
			}
		case from.SecretRef != nil:
			s, err := getSecret(from.SecretRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && isTrue(from.SecretRef.Optional) {
					continue
				}
				return nil, err
			}
			keys := make([]string, 0, len(s.Data))
			for k := range s.Data {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				env.set(from.Prefix+k, string(s.Data[k]))
			}
		}
	}
	mapping := mappingFor(env.vals, svcMap)
	for _, e := range c.Env {
		val := e.Value
		switch {
		case val != "":
			val = expand(val, mapping)
		case e.ValueFrom != nil:
			vf := e.ValueFrom
			switch {
			case vf.FieldRef != nil:
				v, err := podFieldValue(vf.FieldRef, pod, in.PodIPs, in.HostIPs)
				if err != nil {
					return nil, err
				}
				val = v
			case vf.ResourceFieldRef != nil:
				v, err := resourceFieldValue(vf.ResourceFieldRef, pod, c, in.Allocatable)
				if err != nil {
					return nil, err
				}
				val = v
			case vf.ConfigMapKeyRef != nil:
				ref := vf.ConfigMapKeyRef
				cm, err := getCM(ref.Name)
				if err != nil {
					if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
						continue
					}
					return nil, err
				}
				v, ok := cm.Data[ref.Key]
				if !ok {
					if isTrue(ref.Optional) {
						continue
					}
					return nil, fmt.Errorf("couldn't find key %v in ConfigMap %v/%v", ref.Key, pod.Namespace, ref.Name)
				}
				val = v
			case vf.SecretKeyRef != nil:
				ref := vf.SecretKeyRef
				s, err := getSecret(ref.Name)
				if err != nil {
					if apierrors.IsNotFound(err) && isTrue(ref.Optional) {
						continue
					}
					return nil, err
				}
				v, ok := s.Data[ref.Key]
				if !ok {
					if isTrue(ref.Optional) {
						continue
					}
					return nil, fmt.Errorf("couldn't find key %v in Secret %v/%v", ref.Key, pod.Namespace, ref.Name)
				}
				val = string(v)
			}
		}
		env.set(e.Name, val)
	}
	out := make([]envVar, 0, len(env.order)+len(svcEnv))
	for _, k := range env.order {
		out = append(out, envVar{k, env.vals[k]})
	}
	for _, e := range svcEnv {
		if _, ok := env.vals[e.Name]; !ok {
			out = append(out, e)
		}
	}
	return out, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mappingFor resolves a $(VAR) reference from the first map that has it;
// an unknown reference stays as written.
func mappingFor(maps ...map[string]string) func(string) string {
	return func(name string) string {
		for _, m := range maps {
			if v, ok := m[name]; ok {
				return v
			}
		}
		return "$(" + name + ")"
	}
}

// expand replaces $(VAR) references in s through mapping, as upstream's
// expansion.Expand: "$$" is an escaped "$", a "$" before anything else and
// an unclosed "$(" stay as written.
func expand(s string, mapping func(string) string) string {
	var b strings.Builder
	checkpoint := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			continue
		}
		b.WriteString(s[checkpoint:i])
		rest := s[i+1:]
		switch rest[0] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(rest[1:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
			} else {
				b.WriteString(mapping(rest[1 : 1+end]))
				i += end + 2
			}
		default:
			// "$" and the next rune (possibly multi-byte) as they are.
			n := 1
			for n < len(rest) && rest[n]&0xC0 == 0x80 {
				n++
			}
			b.WriteString("$" + rest[:n])
			i += n
		}
		checkpoint = i + 1
	}
	return b.String() + s[checkpoint:]
}

// expandCommand expands $(VAR) in command and args with the container's
// resolved environment, as upstream's ExpandContainerCommandAndArgs.
func expandCommand(c *corev1.Container, env []envVar) (command, args []string) {
	m := make(map[string]string, len(env))
	for _, e := range env {
		m[e.Name] = e.Value
	}
	mapping := mappingFor(m)
	for _, s := range c.Command {
		command = append(command, expand(s, mapping))
	}
	for _, s := range c.Args {
		args = append(args, expand(s, mapping))
	}
	return command, args
}

// podFieldValue is the value of a downward API field of pod, as upstream's
// podFieldSelectorRuntimeValue.
func podFieldValue(fs *corev1.ObjectFieldSelector, pod *corev1.Pod, podIPs, hostIPs []string) (string, error) {
	if fs.APIVersion != "" && fs.APIVersion != "v1" {
		return "", fmt.Errorf("unsupported pod version: %s", fs.APIVersion)
	}
	path := fs.FieldPath
	if p, sub, ok := splitSubscript(path); ok {
		switch p {
		case "metadata.annotations":
			if errs := validation.IsQualifiedName(strings.ToLower(sub)); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", path, strings.Join(errs, ";"))
			}
			return pod.Annotations[sub], nil
		case "metadata.labels":
			if errs := validation.IsQualifiedName(sub); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", path, strings.Join(errs, ";"))
			}
			return pod.Labels[sub], nil
		}
		return "", fmt.Errorf("field label does not support subscript: %s", path)
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
	case "spec.nodeName", "spec.host":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "spec.restartPolicy":
		return string(pod.Spec.RestartPolicy), nil
	case "spec.schedulerName":
		return pod.Spec.SchedulerName, nil
	case "status.phase":
		return string(pod.Status.Phase), nil
	case "status.hostIP":
		if len(hostIPs) == 0 {
			return "", errors.New("cannot get host IPs")
		}
		return hostIPs[0], nil
	case "status.hostIPs":
		return strings.Join(hostIPs, ","), nil
	case "status.podIP":
		if len(podIPs) == 0 {
			return "", nil
		}
		return podIPs[0], nil
	case "status.podIPs":
		return strings.Join(podIPs, ","), nil
	}
	return "", fmt.Errorf("field label not supported: %s", path)
}

func splitSubscript(path string) (string, string, bool) {
	if !strings.HasSuffix(path, "']") {
		return path, "", false
	}
	parts := strings.SplitN(strings.TrimSuffix(path, "']"), "['", 2)
	if len(parts) < 2 || parts[0] == "" {
		return path, "", false
	}
	return parts[0], parts[1], true
}

// formatMap renders labels or annotations as the downward API does:
// sorted key="quoted value" lines.
func formatMap(m map[string]string) string {
	var b []byte
	for _, k := range sortedKeys(m) {
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendQuote(b, m[k])
	}
	return string(b)
}

// resourceFieldValue is the value of a resourceFieldRef for container c
// (or the container it names), limits not set reading as the node's
// allocatable, rounded up in units of the divisor (default 1).
func resourceFieldValue(fs *corev1.ResourceFieldSelector, pod *corev1.Pod, c *corev1.Container, allocatable corev1.ResourceList) (string, error) {
	target := c
	if fs.ContainerName != "" {
		target = nil
		for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
			for i := range list {
				if list[i].Name == fs.ContainerName && target == nil {
					target = &list[i]
				}
			}
		}
		if target == nil {
			return "", fmt.Errorf("container %s not found", fs.ContainerName)
		}
	}
	divisor := fs.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	limit := func(name corev1.ResourceName) resource.Quantity {
		if q, ok := target.Resources.Limits[name]; ok && !q.IsZero() {
			return q
		}
		return allocatable[name]
	}
	request := func(name corev1.ResourceName) resource.Quantity { return target.Resources.Requests[name] }
	ceilDiv := func(a, b int64) string {
		return strconv.FormatInt(int64(math.Ceil(float64(a)/float64(b))), 10)
	}
	switch fs.Resource {
	case "limits.cpu":
		q := limit(corev1.ResourceCPU)
		return ceilDiv(q.MilliValue(), divisor.MilliValue()), nil
	case "requests.cpu":
		q := request(corev1.ResourceCPU)
		return ceilDiv(q.MilliValue(), divisor.MilliValue()), nil
	case "limits.memory", "limits.ephemeral-storage":
		q := limit(corev1.ResourceName(strings.TrimPrefix(fs.Resource, "limits.")))
		return ceilDiv(q.Value(), divisor.Value()), nil
	case "requests.memory", "requests.ephemeral-storage":
		q := request(corev1.ResourceName(strings.TrimPrefix(fs.Resource, "requests.")))
		return ceilDiv(q.Value(), divisor.Value()), nil
	}
	if n, ok := strings.CutPrefix(fs.Resource, "requests."); ok && strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) {
		q := request(corev1.ResourceName(n))
		return ceilDiv(q.Value(), divisor.Value()), nil
	}
	if n, ok := strings.CutPrefix(fs.Resource, "limits."); ok && strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) {
		q := limit(corev1.ResourceName(n))
		return ceilDiv(q.Value(), divisor.Value()), nil
	}
	return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
}
