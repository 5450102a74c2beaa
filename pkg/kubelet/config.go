package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

// MountsFunc returns the CRI mounts of container c of pod (its volumes'
// host directories; pkg/kubelet/volume provides them); env is the
// container's resolved environment (subPathExpr expands from it). An
// error keeps the container from being created (CreateContainerConfigError).
type MountsFunc func(ctx context.Context, pod *corev1.Pod, c *corev1.Container, env map[string]string) ([]*runtimeapi.Mount, error)

// podConfig builds the CRI sandbox and container configurations of a
// node's pods, as upstream's kuberuntime does: pure functions of the pod,
// what the node knows about itself and the cluster objects read through
// Lookups.
type podConfig struct {
	NodeName string
	// HostIPs of the node (status.hostIP(s), the downward API).
	HostIPs []string
	// Allocatable of the node (resourceFieldRef defaults).
	Allocatable corev1.ResourceList
	Lookups     Lookups
	// PodLogDir is the root of the pods' log directories
	// (<PodLogDir>/<ns>_<pod>_<uid>/<container>/<restart>.log); "" sets
	// no log directory or path (the simulated runtime).
	PodLogDir string
	// Mounts are the container's volume mounts (nil: none).
	Mounts MountsFunc

	// ClusterDNS servers and ClusterDomain for dnsPolicy ClusterFirst.
	ClusterDNS    []string
	ClusterDomain string
	// ResolvConf is the node's resolver configuration for dnsPolicy
	// Default ("": none, the pod gets 127.0.0.1, as upstream's).
	ResolvConf string
	// SeccompDefault: containers without a seccomp profile get
	// RuntimeDefault instead of Unconfined.
	SeccompDefault bool
	// SeccompProfileRoot holds Localhost seccomp profiles.
	SeccompProfileRoot string
	// MemoryCapacity of the node in bytes (OOM score adjustment; 0: the
	// allocatable memory).
	MemoryCapacity int64
	// PodDir is the directory of a pod's files, where the kubelet writes
	// its managed /etc/hosts (nil: no managed hosts file, the runtime's).
	PodDir func(uid types.UID) string
	// NodeHostsFile is the node's hosts file that host-network pods get
	// (default /etc/hosts).
	NodeHostsFile string
	// CgroupsPerQOS puts each pod under /kubepods/<qos>/pod<uid> (the
	// runtime creates the directories; the kubelet removes them with the
	// pod). Off: the runtime's default cgroup.
	CgroupsPerQOS bool
}

// podLogDir is the log directory of pod's sandbox ("" without PodLogDir).
func (b *podConfig) podLogDir(pod *corev1.Pod) string {
	if b.PodLogDir == "" {
		return ""
	}
	return filepath.Join(b.PodLogDir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
}

// containerRun is what building a container's configuration knows of the
// container and its sandbox.
type containerRun struct {
	// Type is "init", "sidecar", "regular" or "ephemeral".
	Type    string
	Attempt uint32
	// TargetID is the running container whose PID namespace an ephemeral
	// container joins ("": none).
	TargetID string
	// PodIPs of the sandbox, first the primary.
	PodIPs []string
	// ImageRef is the image the runtime resolved ("" : c.Image).
	ImageRef string
	// ImageUser is the user the image runs as (nil UID and no name: root).
	ImageUser imageUser
}

// containerConfig is the CRI configuration of container c of pod; an
// error is a CreateContainerConfigError.
func (b *podConfig) containerConfig(ctx context.Context, pod *corev1.Pod, c *corev1.Container, run containerRun) (*runtimeapi.ContainerConfig, error) {
	user := run.ImageUser
	if user.UID == nil && user.Username == "" {
		user.UID = new(int64) // upstream: an image without a user runs as root
	}
	if err := verifyRunAsNonRoot(pod, c, user); err != nil {
		return nil, err
	}
	if err := ephemeralTargetCheck(pod, c, run); err != nil {
		return nil, err
	}
	env, err := makeEnvironment(ctx, pod, c, envInput{Lookups: b.Lookups, PodIPs: run.PodIPs, HostIPs: b.HostIPs, Allocatable: b.Allocatable})
	if err != nil {
		return nil, err
	}
	command, args := expandCommand(c, env)
	image := run.ImageRef
	if image == "" {
		image = c.Image
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: run.Attempt},
		Image:      &runtimeapi.ImageSpec{Image: image, UserSpecifiedImage: c.Image},
		Command:    command,
		Args:       args,
		WorkingDir: c.WorkingDir,
		Labels: map[string]string{cri.LabelPodName: pod.Name, cri.LabelPodNamespace: pod.Namespace,
			cri.LabelPodUID: string(pod.UID), cri.LabelContainerName: c.Name},
		Annotations: map[string]string{cri.AnnotationRestartCount: strconv.Itoa(int(run.Attempt)),
			cri.AnnotationContainerType: run.Type, cri.AnnotationPodRestartPolicy: string(restartPolicy(pod)),
			"io.kubernetes.container.terminationMessagePath":   c.TerminationMessagePath,
			"io.kubernetes.container.terminationMessagePolicy": string(c.TerminationMessagePolicy),
			"io.kubernetes.pod.terminationGracePeriod":         strconv.FormatInt(podTerminationGrace(pod), 10)},
		Tty: c.TTY, Stdin: c.Stdin, StdinOnce: c.StdinOnce,
	}
	sc, err := b.containerSecurityContext(pod, c, user)
	if err != nil {
		return nil, err
	}
	withTargetPID(sc, run.TargetID)
	cfg.Linux = &runtimeapi.LinuxContainerConfig{Resources: b.containerResources(pod, c), SecurityContext: sc}
	for _, e := range env {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
	}
	if dir := b.podLogDir(pod); dir != "" {
		// As upstream's kubelet: the container's log directory exists
		// before the runtime opens <name>/<restart>.log in it.
		if err := os.MkdirAll(filepath.Join(dir, c.Name), 0o755); err != nil {
			return nil, fmt.Errorf("create container log directory for container %s failed: %v", c.Name, err)
		}
		cfg.LogPath = filepath.Join(c.Name, strconv.Itoa(int(run.Attempt))+".log")
	}
	if b.Mounts != nil {
		vars := make(map[string]string, len(env))
		for _, e := range env {
			vars[e.Name] = e.Value
		}
		mounts, err := b.Mounts(ctx, pod, c, vars)
		if err != nil {
			return nil, err
		}
		cfg.Mounts = mounts
	}
	if m, err := b.hostsMount(pod, c, run.PodIPs); err != nil {
		return nil, err
	} else if m != nil {
		cfg.Mounts = append(cfg.Mounts, m)
	}
	if m := b.terminationMessageMount(pod, c); m != nil {
		cfg.Mounts = append(cfg.Mounts, m)
	}
	return cfg, nil
}

func podTerminationGrace(pod *corev1.Pod) int64 {
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

// sandboxConfig is the CRI sandbox configuration of pod, as upstream's
// generatePodSandboxConfig; warnings are events to record about the pod.
func (b *podConfig) sandboxConfig(pod *corev1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, []dnsWarning, error) {
	labels := map[string]string{}
	for k, v := range pod.Labels {
		labels[k] = v
	}
	labels[cri.LabelPodName], labels[cri.LabelPodNamespace], labels[cri.LabelPodUID] = pod.Name, pod.Namespace, string(pod.UID)
	annotations := map[string]string{}
	for k, v := range pod.Annotations {
		annotations[k] = v
	}
	annotations[cri.AnnotationPodRestartPolicy] = string(restartPolicy(pod))
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt},
		Labels:   labels, Annotations: annotations, LogDirectory: b.podLogDir(pod),
	}
	dns, warnings, err := b.podDNS(pod)
	if err != nil {
		return nil, nil, err
	}
	cfg.DnsConfig = dns
	if !pod.Spec.HostNetwork {
		hostname, domain, err := b.hostnameAndDomain(pod)
		if err != nil {
			return nil, nil, err
		}
		if cfg.Hostname, err = kernelHostname(hostname, domain, pod.Spec.SetHostnameAsFQDN); err != nil {
			return nil, nil, err
		}
	}
	cfg.PortMappings = portMappings(pod)

	sc := &runtimeapi.LinuxSandboxSecurityContext{
		Privileged:       hasPrivilegedContainer(pod),
		Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
		NamespaceOptions: namespaceOptions(pod),
	}
	lc := &runtimeapi.LinuxPodSandboxConfig{SecurityContext: sc, Sysctls: map[string]string{}}
	if b.CgroupsPerQOS {
		lc.CgroupParent = cgroupParent(pod)
	}
	if ps := pod.Spec.SecurityContext; ps != nil {
		for _, s := range ps.Sysctls {
			lc.Sysctls[s.Name] = s.Value
		}
		if ps.RunAsUser != nil {
			sc.RunAsUser = &runtimeapi.Int64Value{Value: *ps.RunAsUser}
		}
		if ps.RunAsGroup != nil {
			sc.RunAsGroup = &runtimeapi.Int64Value{Value: *ps.RunAsGroup}
		}
		if ps.FSGroup != nil {
			sc.SupplementalGroups = append(sc.SupplementalGroups, *ps.FSGroup)
		}
		sc.SupplementalGroups = append(sc.SupplementalGroups, ps.SupplementalGroups...)
		if p := ps.SupplementalGroupsPolicy; p != nil {
			v, ok := runtimeapi.SupplementalGroupsPolicy_value[string(*p)]
			if !ok {
				return nil, nil, fmt.Errorf("unsupported supplementalGroupsPolicy: %s", string(*p))
			}
			sc.SupplementalGroupsPolicy = runtimeapi.SupplementalGroupsPolicy(v)
		}
		if o := ps.SELinuxOptions; o != nil {
			sc.SelinuxOptions = &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
		}
	}
	requests, limits := podResources(pod)
	var cpuRequest *resource.Quantity
	if q, ok := requests[corev1.ResourceCPU]; ok {
		cpuRequest = &q
	}
	lc.Resources = linuxResources(cpuRequest, limits[corev1.ResourceCPU], limits[corev1.ResourceMemory])
	if oh := pod.Spec.Overhead; oh != nil {
		cpu := oh[corev1.ResourceCPU]
		lc.Overhead = linuxResources(&cpu, cpu, oh[corev1.ResourceMemory])
	}
	cfg.Linux = lc
	return cfg, warnings, nil
}

// portMappings are the containers' ports for the sandbox, as upstream's
// MakePortMappings (a port name, or the port's identity when unnamed,
// counts once per container).
func portMappings(pod *corev1.Pod) []*runtimeapi.PortMapping {
	var out []*runtimeapi.PortMapping
	for i := range pod.Spec.Containers {
		names := map[string]bool{}
		for _, p := range pod.Spec.Containers[i].Ports {
			name := p.Name
			if name == "" {
				family := "any"
				if p.HostIP != "" {
					family = "v4"
					if strings.Contains(p.HostIP, ":") {
						family = "v6"
					}
				}
				name = fmt.Sprintf("%s-%s-%s:%d:%d", family, p.Protocol, p.HostIP, p.ContainerPort, p.HostPort)
			}
			if names[name] {
				continue
			}
			names[name] = true
			proto := runtimeapi.Protocol_TCP
			switch p.Protocol {
			case corev1.ProtocolUDP:
				proto = runtimeapi.Protocol_UDP
			case corev1.ProtocolSCTP:
				proto = runtimeapi.Protocol_SCTP
			}
			out = append(out, &runtimeapi.PortMapping{Protocol: proto, ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP})
		}
	}
	return out
}

const etcHostsPath = "/etc/hosts"

// hostsMount writes the pod's managed hosts file and mounts it at
// /etc/hosts, as upstream's makeHostsMount: for a pod with IPs (or on the
// host network) whose container does not mount /etc/hosts itself.
func (b *podConfig) hostsMount(pod *corev1.Pod, c *corev1.Container, podIPs []string) (*runtimeapi.Mount, error) {
	if b.PodDir == nil || (len(podIPs) == 0 && !pod.Spec.HostNetwork) {
		return nil, nil
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == etcHostsPath {
			return nil, nil
		}
	}
	content, err := b.hostsFileContent(pod, podIPs)
	if err != nil {
		return nil, err
	}
	dir := b.PodDir(pod.UID)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "etc-hosts")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o644); err != nil {
		return nil, err
	}
	return &runtimeapi.Mount{ContainerPath: etcHostsPath, HostPath: path, SelinuxRelabel: true}, nil
}

// hostsFileContent is the managed hosts file: localhost entries and the
// pod's IPs with its hostname (and FQDN with a subdomain), or the node's
// hosts file on the host network; then the pod's hostAliases.
func (b *podConfig) hostsFileContent(pod *corev1.Pod, podIPs []string) ([]byte, error) {
	var buf strings.Builder
	if pod.Spec.HostNetwork {
		path := b.NodeHostsFile
		if path == "" {
			path = etcHostsPath
		}
		node, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		buf.WriteString("# Kubernetes-managed hosts file (host network).\n")
		buf.Write(node)
	} else {
		hostname, domain, err := b.hostnameAndDomain(pod)
		if err != nil {
			return nil, err
		}
		buf.WriteString("# Kubernetes-managed hosts file.\n")
		buf.WriteString("127.0.0.1\tlocalhost\n")
		buf.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
		buf.WriteString("fe00::0\tip6-localnet\n")
		buf.WriteString("fe00::0\tip6-mcastprefix\n")
		buf.WriteString("fe00::1\tip6-allnodes\n")
		buf.WriteString("fe00::2\tip6-allrouters\n")
		for _, ip := range podIPs {
			if domain != "" {
				fmt.Fprintf(&buf, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
			} else {
				fmt.Fprintf(&buf, "%s\t%s\n", ip, hostname)
			}
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		buf.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&buf, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return []byte(buf.String()), nil
}

// runtimeHandler is the runtime handler of the pod's RuntimeClass ("":
// the runtime's default), as upstream's LookupRuntimeHandler.
func (b *podConfig) runtimeHandler(ctx context.Context, pod *corev1.Pod) (string, error) {
	if pod.Spec.RuntimeClassName == nil || *pod.Spec.RuntimeClassName == "" || b.Lookups.RuntimeClass == nil {
		return "", nil
	}
	name := *pod.Spec.RuntimeClassName
	rc, err := b.Lookups.RuntimeClass(ctx, name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return "", err
		}
		return "", fmt.Errorf("failed to lookup RuntimeClass %s: %v", name, err)
	}
	return rc.Handler, nil
}
