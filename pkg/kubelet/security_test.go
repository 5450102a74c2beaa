package kubelet

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
)

func rl(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func cfgPod(containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"}, Spec: corev1.PodSpec{Containers: containers}}
}

func TestContainerSecurityContext(t *testing.T) {
	b := &podConfig{SeccompProfileRoot: "/var/lib/kubelet/seccomp"}
	unmasked := corev1.UnmaskedProcMount
	for _, tc := range []struct {
		name  string
		podSC *corev1.PodSecurityContext
		sc    *corev1.SecurityContext
		user  imageUser
		check func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext)
	}{{
		name: "nothing set: the image's user, unconfined, default masked paths",
		user: imageUser{UID: ptrTo(int64(0))},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			if sc.RunAsUser.GetValue() != 0 || sc.RunAsUser == nil || sc.Privileged || sc.ReadonlyRootfs || sc.NoNewPrivs || sc.Capabilities != nil {
				t.Errorf("%+v", sc)
			}
			if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_Unconfined {
				t.Errorf("seccomp %v", sc.Seccomp)
			}
			if !reflect.DeepEqual(sc.MaskedPaths, defaultMaskedPaths) || !reflect.DeepEqual(sc.ReadonlyPaths, defaultReadonlyPaths) {
				t.Errorf("masked %v readonly %v", sc.MaskedPaths, sc.ReadonlyPaths)
			}
			if ns := sc.NamespaceOptions; ns.Network != runtimeapi.NamespaceMode_POD || ns.Pid != runtimeapi.NamespaceMode_CONTAINER || ns.Ipc != runtimeapi.NamespaceMode_POD {
				t.Errorf("namespaces %v", ns)
			}
		},
	}, {
		name: "image user by name",
		user: imageUser{Username: "nobody"},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			if sc.RunAsUser != nil || sc.RunAsUsername != "nobody" {
				t.Errorf("%v %q", sc.RunAsUser, sc.RunAsUsername)
			}
		},
	}, {
		name:  "pod values, container overrides",
		podSC: &corev1.PodSecurityContext{RunAsUser: ptrTo(int64(1000)), RunAsGroup: ptrTo(int64(3000)), FSGroup: ptrTo(int64(2000)), SupplementalGroups: []int64{4000, 5000}},
		sc: &corev1.SecurityContext{RunAsUser: ptrTo(int64(1001)), Privileged: ptrTo(true), ReadOnlyRootFilesystem: ptrTo(true),
			AllowPrivilegeEscalation: ptrTo(false), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}, Drop: []corev1.Capability{"ALL"}},
			ProcMount: &unmasked},
		user: imageUser{UID: ptrTo(int64(0))},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			if sc.RunAsUser.GetValue() != 1001 || sc.RunAsGroup.GetValue() != 3000 || !sc.Privileged || !sc.ReadonlyRootfs || !sc.NoNewPrivs {
				t.Errorf("%+v", sc)
			}
			if !reflect.DeepEqual(sc.SupplementalGroups, []int64{2000, 4000, 5000}) {
				t.Errorf("groups %v", sc.SupplementalGroups)
			}
			if !reflect.DeepEqual(sc.Capabilities.AddCapabilities, []string{"NET_ADMIN"}) || !reflect.DeepEqual(sc.Capabilities.DropCapabilities, []string{"ALL"}) {
				t.Errorf("capabilities %v", sc.Capabilities)
			}
			if len(sc.MaskedPaths) != 0 || len(sc.ReadonlyPaths) != 0 || sc.MaskedPaths == nil {
				t.Errorf("Unmasked procMount: %v %v", sc.MaskedPaths, sc.ReadonlyPaths)
			}
		},
	}, {
		name:  "seccomp: the container's over the pod's; localhost under the root",
		podSC: &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		sc:    &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptrTo("my.json")}},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_Localhost || sc.Seccomp.LocalhostRef != "/var/lib/kubelet/seccomp/my.json" {
				t.Errorf("seccomp %v", sc.Seccomp)
			}
		},
	}, {
		name:  "seccomp from the pod",
		podSC: &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		check: func(t *testing.T, sc *runtimeapi.LinuxContainerSecurityContext) {
			if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_RuntimeDefault {
				t.Errorf("seccomp %v", sc.Seccomp)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pod := cfgPod(corev1.Container{Name: "c", SecurityContext: tc.sc})
			pod.Spec.SecurityContext = tc.podSC
			sc, err := b.containerSecurityContext(pod, &pod.Spec.Containers[0], tc.user)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, sc)
		})
	}
	// seccompDefault turns the unset profile into RuntimeDefault.
	pod := cfgPod(corev1.Container{Name: "c"})
	sc, _ := (&podConfig{SeccompDefault: true}).containerSecurityContext(pod, &pod.Spec.Containers[0], imageUser{})
	if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_RuntimeDefault {
		t.Errorf("seccompDefault: %v", sc.Seccomp)
	}
	// Host namespaces and a shared process namespace.
	pod.Spec.HostNetwork, pod.Spec.HostIPC, pod.Spec.ShareProcessNamespace = true, true, ptrTo(true)
	if ns := namespaceOptions(pod); ns.Network != runtimeapi.NamespaceMode_NODE || ns.Ipc != runtimeapi.NamespaceMode_NODE || ns.Pid != runtimeapi.NamespaceMode_POD {
		t.Errorf("namespaces %v", ns)
	}
	pod.Spec.HostPID = true
	if ns := namespaceOptions(pod); ns.Pid != runtimeapi.NamespaceMode_NODE {
		t.Errorf("hostPID: %v", ns)
	}
}

func TestVerifyRunAsNonRoot(t *testing.T) {
	for _, tc := range []struct {
		name  string
		podSC *corev1.PodSecurityContext
		sc    *corev1.SecurityContext
		user  imageUser
		want  string
	}{
		{name: "not asked", user: imageUser{UID: ptrTo(int64(0))}},
		{name: "runAsUser 0", sc: &corev1.SecurityContext{RunAsNonRoot: ptrTo(true), RunAsUser: ptrTo(int64(0))},
			want: `container's runAsUser breaks non-root policy (pod: "p_ns(uid-1)", container: c)`},
		{name: "runAsUser 1000", podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptrTo(true)}, sc: &corev1.SecurityContext{RunAsUser: ptrTo(int64(1000))}, user: imageUser{UID: ptrTo(int64(0))}},
		{name: "image root", podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptrTo(true)}, user: imageUser{UID: ptrTo(int64(0))},
			want: `container has runAsNonRoot and image will run as root (pod: "p_ns(uid-1)", container: c)`},
		{name: "image user name", sc: &corev1.SecurityContext{RunAsNonRoot: ptrTo(true)}, user: imageUser{Username: "app"},
			want: `container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root (pod: "p_ns(uid-1)", container: c)`},
		{name: "image uid 1000", sc: &corev1.SecurityContext{RunAsNonRoot: ptrTo(true)}, user: imageUser{UID: ptrTo(int64(1000))}},
		{name: "container turns it off", podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptrTo(true)}, sc: &corev1.SecurityContext{RunAsNonRoot: ptrTo(false)}, user: imageUser{UID: ptrTo(int64(0))}},
	} {
		pod := cfgPod(corev1.Container{Name: "c", SecurityContext: tc.sc})
		pod.Spec.SecurityContext = tc.podSC
		err := verifyRunAsNonRoot(pod, &pod.Spec.Containers[0], tc.user)
		if got := ""; err != nil || tc.want != "" {
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		}
	}
}

func TestResourcesAndQoS(t *testing.T) {
	const gi = int64(1) << 30
	b := &podConfig{MemoryCapacity: 4 * gi}
	for _, tc := range []struct {
		name       string
		containers []corev1.Container
		qos        corev1.PodQOSClass
		parent     string
		want       *runtimeapi.LinuxContainerResources // of the first container
	}{{
		name:       "best effort",
		containers: []corev1.Container{{Name: "a"}},
		qos:        corev1.PodQOSBestEffort, parent: "/kubepods/besteffort/poduid-1",
		want: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: 1000},
	}, {
		name:       "guaranteed",
		containers: []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "500m", "memory", "256Mi"), Limits: rl("cpu", "500m", "memory", "256Mi")}}},
		qos:        corev1.PodQOSGuaranteed, parent: "/kubepods/poduid-1",
		want: &runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 256 << 20, OomScoreAdj: -997},
	}, {
		name:       "burstable: request 1Gi of 4Gi",
		containers: []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1m", "memory", "1Gi")}}},
		qos:        corev1.PodQOSBurstable, parent: "/kubepods/burstable/poduid-1",
		want: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: 750},
	}, {
		name:       "burstable: only a cpu limit (shares from it), tiny quota",
		containers: []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Limits: rl("cpu", "5m")}}, {Name: "b"}},
		qos:        corev1.PodQOSBurstable, parent: "/kubepods/burstable/poduid-1",
		want: &runtimeapi.LinuxContainerResources{CpuShares: 5, CpuPeriod: 100000, CpuQuota: 1000, OomScoreAdj: 999},
	}, {
		name:       "burstable: request near capacity stays above guaranteed",
		containers: []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Requests: rl("memory", "4Gi"), Limits: rl("memory", "8Gi")}}},
		qos:        corev1.PodQOSBurstable, parent: "/kubepods/burstable/poduid-1",
		want: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, MemoryLimitInBytes: 8 * gi, OomScoreAdj: 3},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pod := cfgPod(tc.containers...)
			if q := qosClass(pod); q != tc.qos {
				t.Errorf("qos %s, want %s", q, tc.qos)
			}
			if p := cgroupParent(pod); p != tc.parent {
				t.Errorf("cgroup parent %q, want %q", p, tc.parent)
			}
			if got := b.containerResources(pod, &pod.Spec.Containers[0]); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("resources %+v\nwant %+v", got, tc.want)
			}
		})
	}
	// A sidecar's OOM score is no higher than the smallest regular container's.
	pod := cfgPod(corev1.Container{Name: "main", Resources: corev1.ResourceRequirements{Requests: rl("memory", "2Gi")}})
	pod.Spec.InitContainers = []corev1.Container{{Name: "side", RestartPolicy: ptrTo(corev1.ContainerRestartPolicyAlways)}}
	if adj := oomScoreAdj(pod, &pod.Spec.InitContainers[0], 4*gi); adj != 500 {
		t.Errorf("sidecar oom_score_adj %d, want 500", adj)
	}
	// The sandbox gets the pod's sums (init containers' maximum).
	pod = cfgPod(corev1.Container{Name: "a", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "100m"), Limits: rl("cpu", "200m", "memory", "100Mi")}},
		corev1.Container{Name: "b", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "300m"), Limits: rl("cpu", "400m", "memory", "100Mi")}})
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1"), Limits: rl("cpu", "1")}}}
	cfg, _, err := (&podConfig{CgroupsPerQOS: true}).sandboxConfig(pod, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Linux.Resources; r.CpuShares != 1024 || r.CpuQuota != 100000 || r.MemoryLimitInBytes != 200<<20 {
		t.Errorf("sandbox resources %+v", r)
	}
	if cfg.Linux.CgroupParent != "/kubepods/burstable/poduid-1" {
		t.Errorf("cgroup parent %q", cfg.Linux.CgroupParent)
	}
}

func TestPodDNS(t *testing.T) {
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(resolv, []byte("# host\nnameserver 192.168.1.1\nnameserver 192.168.1.2\nsearch corp.example. lab.example\noptions ndots:2 timeout:3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cluster := &podConfig{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", ResolvConf: resolv, HostIPs: []string{"10.0.0.7"}}
	noDNS := &podConfig{ClusterDomain: "cluster.local", ResolvConf: resolv}
	noResolv := &podConfig{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", HostIPs: []string{"fd00::7"}}
	host := &runtimeapi.DNSConfig{Servers: []string{"192.168.1.1", "192.168.1.2"}, Searches: []string{"corp.example", "lab.example"}, Options: []string{"ndots:2", "timeout:3"}}
	clusterFirst := &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"}, Searches: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example"}, Options: []string{"ndots:5"}}
	for _, tc := range []struct {
		name     string
		b        *podConfig
		policy   corev1.DNSPolicy
		hostNet  bool
		dnsCfg   *corev1.PodDNSConfig
		want     *runtimeapi.DNSConfig
		warnings string
	}{
		{name: "ClusterFirst", b: cluster, policy: corev1.DNSClusterFirst, want: clusterFirst},
		{name: "ClusterFirst with hostNetwork is Default", b: cluster, policy: corev1.DNSClusterFirst, hostNet: true, want: host},
		{name: "ClusterFirstWithHostNet", b: cluster, policy: corev1.DNSClusterFirstWithHostNet, hostNet: true, want: clusterFirst},
		{name: "Default", b: cluster, policy: corev1.DNSDefault, want: host},
		{name: "Default without resolv.conf", b: noResolv, policy: corev1.DNSDefault, want: &runtimeapi.DNSConfig{Servers: []string{"::1"}, Searches: []string{"."}}},
		{name: "None with dnsConfig", b: cluster, policy: corev1.DNSNone,
			dnsCfg: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.example"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptrTo("1")}, {Name: "edns0"}}},
			want:   &runtimeapi.DNSConfig{Servers: []string{"1.1.1.1"}, Searches: []string{"a.example"}, Options: []string{"edns0", "ndots:1"}}},
		{name: "ClusterFirst merged with dnsConfig", b: cluster, policy: corev1.DNSClusterFirst,
			dnsCfg: &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10", "8.8.8.8"}, Searches: []string{"cluster.local", "x.example"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptrTo("2")}}},
			want: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10", "8.8.8.8"}, Searches: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example", "x.example"},
				Options: []string{"ndots:2"}}},
		{name: "no cluster DNS: Default with a warning", b: noDNS, policy: corev1.DNSClusterFirst, want: host,
			warnings: `MissingClusterDNS: kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`},
		{name: "too many nameservers", b: cluster, policy: corev1.DNSDefault, dnsCfg: &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1", "8.8.8.8"}},
			want:     &runtimeapi.DNSConfig{Servers: []string{"192.168.1.1", "192.168.1.2", "1.1.1.1"}, Searches: host.Searches, Options: host.Options},
			warnings: "DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 192.168.1.1 192.168.1.2 1.1.1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := cfgPod()
			pod.Spec.DNSPolicy, pod.Spec.HostNetwork, pod.Spec.DNSConfig = tc.policy, tc.hostNet, tc.dnsCfg
			got, warnings, err := tc.b.podDNS(pod)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("dns %+v\nwant %+v", got, tc.want)
			}
			var ws []string
			for _, w := range warnings {
				ws = append(ws, w.Reason+": "+w.Message)
			}
			if strings.Join(ws, "\n") != tc.warnings {
				t.Errorf("warnings %q, want %q", ws, tc.warnings)
			}
		})
	}
}

func TestSandboxConfig(t *testing.T) {
	b := &podConfig{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", PodLogDir: "/var/log/pods"}
	pod := cfgPod(corev1.Container{Name: "web", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP},
		{ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {Name: "http", ContainerPort: 81}}, SecurityContext: &corev1.SecurityContext{Privileged: ptrTo(true)}})
	pod.Labels = map[string]string{"app": "web"}
	pod.Spec.Hostname, pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN = "h", "sub", ptrTo(true)
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}, RunAsUser: ptrTo(int64(7)), FSGroup: ptrTo(int64(9))}
	cfg, _, err := b.sandboxConfig(pod, 2)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hostname != "h.sub.ns.svc.cluster.local" || cfg.LogDirectory != "/var/log/pods/ns_p_uid-1" || cfg.Metadata.Attempt != 2 {
		t.Errorf("hostname %q log dir %q metadata %v", cfg.Hostname, cfg.LogDirectory, cfg.Metadata)
	}
	if cfg.Labels["app"] != "web" || cfg.Labels["io.kubernetes.pod.uid"] != "uid-1" {
		t.Errorf("labels %v", cfg.Labels)
	}
	want := []*runtimeapi.PortMapping{{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 80, HostPort: 8080}, {Protocol: runtimeapi.Protocol_UDP, ContainerPort: 53}}
	if !reflect.DeepEqual(cfg.PortMappings, want) {
		t.Errorf("ports %v", cfg.PortMappings)
	}
	sc := cfg.Linux.SecurityContext
	if !sc.Privileged || sc.RunAsUser.GetValue() != 7 || !reflect.DeepEqual(sc.SupplementalGroups, []int64{9}) || sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_RuntimeDefault {
		t.Errorf("sandbox security context %+v", sc)
	}
	if cfg.Linux.Sysctls["net.core.somaxconn"] != "1024" || cfg.Linux.CgroupParent != "" {
		t.Errorf("sysctls %v cgroup parent %q", cfg.Linux.Sysctls, cfg.Linux.CgroupParent)
	}
	// A short hostname without setHostnameAsFQDN; none with hostNetwork;
	// an FQDN over 64 characters is an error.
	pod.Spec.SetHostnameAsFQDN = nil
	if cfg, _, _ := b.sandboxConfig(pod, 0); cfg.Hostname != "h" {
		t.Errorf("hostname %q", cfg.Hostname)
	}
	pod.Spec.Hostname = strings.Repeat("x", 70)
	if cfg, _, _ := b.sandboxConfig(pod, 0); cfg.Hostname != strings.Repeat("x", 63) {
		t.Errorf("long hostname %q", cfg.Hostname)
	}
	pod.Spec.SetHostnameAsFQDN = ptrTo(true)
	if _, _, err := b.sandboxConfig(pod, 0); err == nil || !strings.Contains(err.Error(), "is too long (64 characters is the max") {
		t.Errorf("long FQDN: %v", err)
	}
	pod.Spec.HostNetwork = true
	if cfg, _, _ := b.sandboxConfig(pod, 0); cfg.Hostname != "" || cfg.Linux.SecurityContext.NamespaceOptions.Network != runtimeapi.NamespaceMode_NODE {
		t.Errorf("host network: hostname %q, namespaces %v", cfg.Hostname, cfg.Linux.SecurityContext.NamespaceOptions)
	}
}

// Through the kubelet: the container request carries its security
// context and resources; runAsNonRoot with a root image is a
// CreateContainerConfigError.
func TestSecurityAndResourcesThroughTheKubelet(t *testing.T) {
	h := newHarness(t, sim.Config{})
	pod := simplePod("secure", "app", "rooted")
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: ptrTo(int64(1000)), RunAsNonRoot: ptrTo(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: rl("cpu", "250m", "memory", "64Mi"), Limits: rl("cpu", "500m", "memory", "128Mi")}
	pod.Spec.Containers[1].SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptrTo(true)}
	h.create(t, pod)
	p := h.podWhere(t, "secure", 0, func(p *corev1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "rooted" && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError" {
				return true
			}
		}
		return false
	})
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == "rooted" {
			if want := `container has runAsNonRoot and image will run as root (pod: "secure_default(` + string(p.UID) + `)", container: rooted)`; cs.State.Waiting.Message != want {
				t.Errorf("message %q, want %q", cs.State.Waiting.Message, want)
			}
		}
	}
	waitFor(t, "the app container", func() (bool, error) { return h.cri.created("app") != nil, nil })
	req := h.cri.created("app")
	lc := req.Config.Linux
	if lc.SecurityContext.RunAsUser.GetValue() != 1000 || !reflect.DeepEqual(lc.SecurityContext.Capabilities.DropCapabilities, []string{"ALL"}) {
		t.Errorf("security context %+v", lc.SecurityContext)
	}
	if r := lc.Resources; r.CpuShares != 256 || r.CpuQuota != 50000 || r.CpuPeriod != 100000 || r.MemoryLimitInBytes != 128<<20 || r.OomScoreAdj <= 0 {
		t.Errorf("resources %+v", r)
	}
	if d := req.SandboxConfig.DnsConfig; d == nil || len(d.Servers) != 1 || d.Servers[0] != "10.96.0.10" {
		t.Errorf("sandbox DNS %v", d)
	}
}

func TestRemovePodCgroups(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"cpu/kubepods/burstable/poduid-1", "memory/kubepods/burstable/poduid-1", "memory/kubepods/burstable/poduid-2",
		"pids/kubepods/burstable/poduid-1/busy"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removePodCgroups(root, "uid-1")
	for d, want := range map[string]bool{"cpu/kubepods/burstable/poduid-1": false, "memory/kubepods/burstable/poduid-1": false,
		"memory/kubepods/burstable/poduid-2": true, "pids/kubepods/burstable/poduid-1": true} {
		if _, err := os.Stat(filepath.Join(root, d)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", d, err == nil, want)
		}
	}
}

// The handler of the pod's RuntimeClass goes with RunPodSandbox.
func TestRuntimeClassHandler(t *testing.T) {
	h := newHarness(t, sim.Config{})
	rcs := client.For[*nodev1.RuntimeClass, *nodev1.RuntimeClassList](h.c)
	if _, err := rcs.Create(h.ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "sandboxed"}, Handler: "kata"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := simplePod("rc", "app")
	pod.Spec.RuntimeClassName = ptrTo("sandboxed")
	h.create(t, pod)
	h.podWhere(t, "rc", 0, isReady)
	h.cri.mu.Lock()
	defer h.cri.mu.Unlock()
	if len(h.cri.sandboxes) != 1 || h.cri.sandboxes[0].RuntimeHandler != "kata" {
		t.Errorf("sandbox requests %v", h.cri.sandboxes)
	}
}
