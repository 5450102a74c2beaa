package kubelet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// effectiveSecurityContext is the container's security context over the
// pod's (runAsUser, runAsGroup, runAsNonRoot, seLinuxOptions,
// seccompProfile, appArmorProfile come from the pod unless the container
// sets them), as upstream's DetermineEffectiveSecurityContext.
func effectiveSecurityContext(pod *corev1.Pod, c *corev1.Container) *corev1.SecurityContext {
	var sc corev1.SecurityContext
	if ps := pod.Spec.SecurityContext; ps != nil {
		sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot = ps.RunAsUser, ps.RunAsGroup, ps.RunAsNonRoot
		sc.SELinuxOptions, sc.SeccompProfile, sc.AppArmorProfile = ps.SELinuxOptions, ps.SeccompProfile, ps.AppArmorProfile
	}
	cs := c.SecurityContext
	if cs == nil {
		return &sc
	}
	if cs.SELinuxOptions != nil {
		sc.SELinuxOptions = cs.SELinuxOptions
	}
	if cs.Capabilities != nil {
		sc.Capabilities = cs.Capabilities
	}
	if cs.Privileged != nil {
		sc.Privileged = cs.Privileged
	}
	if cs.RunAsUser != nil {
		sc.RunAsUser = cs.RunAsUser
	}
	if cs.RunAsGroup != nil {
		sc.RunAsGroup = cs.RunAsGroup
	}
	if cs.RunAsNonRoot != nil {
		sc.RunAsNonRoot = cs.RunAsNonRoot
	}
	if cs.ReadOnlyRootFilesystem != nil {
		sc.ReadOnlyRootFilesystem = cs.ReadOnlyRootFilesystem
	}
	if cs.AllowPrivilegeEscalation != nil {
		sc.AllowPrivilegeEscalation = cs.AllowPrivilegeEscalation
	}
	if cs.ProcMount != nil {
		sc.ProcMount = cs.ProcMount
	}
	if cs.SeccompProfile != nil {
		sc.SeccompProfile = cs.SeccompProfile
	}
	if cs.AppArmorProfile != nil {
		sc.AppArmorProfile = cs.AppArmorProfile
	}
	return &sc
}

// imageUser is the user an image runs as: a numeric UID, or a name
// the runtime resolves (then UID is nil).
type imageUser struct {
	UID      *int64
	Username string
}

func podString(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// verifyRunAsNonRoot refuses a container that must not run as root but
// would, with upstream's messages.
func verifyRunAsNonRoot(pod *corev1.Pod, c *corev1.Container, user imageUser) error {
	sc := effectiveSecurityContext(pod, c)
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		return nil
	}
	if sc.RunAsUser != nil {
		if *sc.RunAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", podString(pod), c.Name)
		}
		return nil
	}
	switch {
	case user.UID == nil && user.Username != "":
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", user.Username, podString(pod), c.Name)
	case user.UID != nil && *user.UID == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", podString(pod), c.Name)
	case user.UID != nil && (*user.UID < 0 || *user.UID > 2147483647):
		return fmt.Errorf("container has runAsNonRoot and image has an invalid user id (%d). (Must be 1-(%d)): must be between 0 and 2147483647, inclusive (pod: %q, container: %s)",
			*user.UID, 2147483647, podString(pod), c.Name)
	}
	return nil
}

// Paths masked and made read-only in /proc and /sys unless procMount is
// Unmasked (moby's defaults, which upstream's kubelet keeps in sync).
var (
	defaultMaskedPaths = []string{"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
		"/sys/firmware", "/sys/devices/virtual/powercap"}
	defaultReadonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

func maskedPaths(procMount *corev1.ProcMountType) []string {
	if procMount != nil && *procMount == corev1.UnmaskedProcMount {
		return []string{}
	}
	return append([]string(nil), defaultMaskedPaths...)
}

func readonlyPaths(procMount *corev1.ProcMountType) []string {
	if procMount != nil && *procMount == corev1.UnmaskedProcMount {
		return []string{}
	}
	return append([]string(nil), defaultReadonlyPaths...)
}

// namespaceOptions are the pod's namespaces: the node's network, IPC or
// PID namespace with hostNetwork, hostIPC, hostPID; one PID namespace for
// the pod with shareProcessNamespace, else one per container.
func namespaceOptions(pod *corev1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Ipc: runtimeapi.NamespaceMode_POD,
		Pid: runtimeapi.NamespaceMode_CONTAINER}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		ns.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	return ns
}

// seccompProfile is the container's seccomp profile: its own, else the
// pod's, else RuntimeDefault with the kubelet's seccompDefault, else
// Unconfined; Localhost profiles are files under profileRoot.
func seccompProfile(sc *corev1.SecurityContext, seccompDefault bool, profileRoot string) (*runtimeapi.SecurityProfile, error) {
	p := sc.SeccompProfile
	if p == nil {
		if seccompDefault {
			return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
	}
	switch p.Type {
	case corev1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
	case corev1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return nil, errors.New("localhostProfile must be set if seccompProfile type is Localhost.")
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost,
			LocalhostRef: filepath.Join(profileRoot, *p.LocalhostProfile)}, nil
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
}

// containerSecurityContext is the CRI security context of c, as
// upstream's determineEffectiveSecurityContext.
func (b *podConfig) containerSecurityContext(pod *corev1.Pod, c *corev1.Container, user imageUser) (*runtimeapi.LinuxContainerSecurityContext, error) {
	sc := effectiveSecurityContext(pod, c)
	out := &runtimeapi.LinuxContainerSecurityContext{}
	if caps := sc.Capabilities; caps != nil {
		out.Capabilities = &runtimeapi.Capability{AddCapabilities: []string{}, DropCapabilities: []string{}}
		for _, a := range caps.Add {
			out.Capabilities.AddCapabilities = append(out.Capabilities.AddCapabilities, string(a))
		}
		for _, d := range caps.Drop {
			out.Capabilities.DropCapabilities = append(out.Capabilities.DropCapabilities, string(d))
		}
	}
	if o := sc.SELinuxOptions; o != nil {
		out.SelinuxOptions = &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
	}
	if sc.RunAsUser != nil {
		out.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
	}
	if sc.RunAsGroup != nil {
		out.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
	}
	out.Privileged = sc.Privileged != nil && *sc.Privileged
	out.ReadonlyRootfs = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	var err error
	if out.Seccomp, err = seccompProfile(sc, b.SeccompDefault, b.SeccompProfileRoot); err != nil {
		return nil, err
	}
	if a := sc.AppArmorProfile; a != nil {
		switch a.Type {
		case corev1.AppArmorProfileTypeRuntimeDefault:
			out.Apparmor = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
		case corev1.AppArmorProfileTypeUnconfined:
			out.Apparmor = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
		case corev1.AppArmorProfileTypeLocalhost:
			if a.LocalhostProfile != nil {
				out.Apparmor = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: *a.LocalhostProfile}
			}
		}
	}
	if out.RunAsUser == nil {
		if user.UID != nil {
			out.RunAsUser = &runtimeapi.Int64Value{Value: *user.UID}
		}
		out.RunAsUsername = user.Username
	}
	out.NamespaceOptions = namespaceOptions(pod)
	if ps := pod.Spec.SecurityContext; ps != nil {
		if ps.FSGroup != nil {
			out.SupplementalGroups = append(out.SupplementalGroups, *ps.FSGroup)
		}
		out.SupplementalGroups = append(out.SupplementalGroups, ps.SupplementalGroups...)
		if p := ps.SupplementalGroupsPolicy; p != nil {
			v, ok := runtimeapi.SupplementalGroupsPolicy_value[string(*p)]
			if !ok {
				return nil, fmt.Errorf("unsupported supplementalGroupsPolicy: %s", string(*p))
			}
			out.SupplementalGroupsPolicy = runtimeapi.SupplementalGroupsPolicy(v)
		}
	}
	out.NoNewPrivs = sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
	out.MaskedPaths = maskedPaths(sc.ProcMount)
	out.ReadonlyPaths = readonlyPaths(sc.ProcMount)
	return out, nil
}

// hasPrivilegedContainer: some container of pod runs privileged (the
// sandbox must be privileged too).
func hasPrivilegedContainer(pod *corev1.Pod) bool {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if sc := list[i].SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
				return true
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if sc := pod.Spec.EphemeralContainers[i].SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
			return true
		}
	}
	return false
}

// CPU and OOM constants as upstream's kubelet.
const (
	minShares             = 2
	maxShares             = 262144
	sharesPerCPU          = 1024
	quotaPeriod           = 100000 // µs
	minQuotaPeriod        = 1000
	guaranteedOOMScoreAdj = -997
	besteffortOOMScoreAdj = 1000
)

func milliCPUToShares(milliCPU int64) int64 {
	if milliCPU == 0 {
		return minShares
	}
	shares := milliCPU * sharesPerCPU / 1000
	return max(minShares, min(shares, maxShares))
}

func milliCPUToQuota(milliCPU, period int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	return max(milliCPU*period/1000, minQuotaPeriod)
}

// linuxResources are the cgroup settings of a CPU request (nil: none),
// CPU limit and memory limit, as upstream's calculateLinuxResources with
// CFS quota on: shares from the request (else the limit; min 2), quota
// from the limit over a 100 ms period.
func linuxResources(cpuRequest *resource.Quantity, cpuLimit, memoryLimit resource.Quantity) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{}
	if cpuRequest == nil && !cpuLimit.IsZero() {
		r.CpuShares = milliCPUToShares(cpuLimit.MilliValue())
	} else {
		var m int64
		if cpuRequest != nil {
			m = cpuRequest.MilliValue()
		}
		r.CpuShares = milliCPUToShares(m)
	}
	if v := memoryLimit.Value(); v != 0 {
		r.MemoryLimitInBytes = v
	}
	r.CpuPeriod = quotaPeriod
	r.CpuQuota = milliCPUToQuota(cpuLimit.MilliValue(), quotaPeriod)
	return r
}

// qosClass is the pod's QoS class (status.qosClass, computed as
// upstream's GetPodQOS when empty).
func qosClass(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	supported := map[corev1.ResourceName]bool{corev1.ResourceCPU: true, corev1.ResourceMemory: true}
	add := func(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		sum := l[name]
		sum.Add(q)
		l[name] = sum
	}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			for name, q := range c.Resources.Requests {
				if supported[name] && q.Sign() > 0 {
					add(requests, name, q)
				}
			}
			found := 0
			for name, q := range c.Resources.Limits {
				if supported[name] && q.Sign() > 0 {
					add(limits, name, q)
					found++
				}
			}
			if found != len(supported) {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// oomScoreAdj is the container's oom_score_adj by upstream's QoS policy:
// -997 for Guaranteed and node-critical pods, 1000 for BestEffort, and
// for Burstable 1000 - 1000*request/capacity within [3, 999] (a sidecar
// no higher than the pod's smallest regular container).
func oomScoreAdj(pod *corev1.Pod, c *corev1.Container, memoryCapacity int64) int64 {
	if pod.Spec.PriorityClassName == "system-node-critical" && pod.Spec.Priority != nil && *pod.Spec.Priority >= 2000000000 {
		return guaranteedOOMScoreAdj
	}
	switch qosClass(pod) {
	case corev1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case corev1.PodQOSBestEffort:
		return besteffortOOMScoreAdj
	}
	if memoryCapacity <= 0 {
		return besteffortOOMScoreAdj - 1
	}
	adj := 1000 - 1000*c.Resources.Requests.Memory().Value()/memoryCapacity
	if isSidecar(c) && isInit(pod, c.Name) {
		var minReq int64
		for i := range pod.Spec.Containers {
			if r := pod.Spec.Containers[i].Resources.Requests.Memory().Value(); i == 0 || r < minReq {
				minReq = r
			}
		}
		adj = min(adj, 1000-1000*minReq/memoryCapacity)
	}
	if adj < 1000+guaranteedOOMScoreAdj {
		return 1000 + guaranteedOOMScoreAdj
	}
	if adj == besteffortOOMScoreAdj {
		return adj - 1
	}
	return adj
}

// containerResources are c's cgroup settings.
func (b *podConfig) containerResources(pod *corev1.Pod, c *corev1.Container) *runtimeapi.LinuxContainerResources {
	var cpuRequest *resource.Quantity
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		cpuRequest = &q
	}
	r := linuxResources(cpuRequest, c.Resources.Limits[corev1.ResourceCPU], c.Resources.Limits[corev1.ResourceMemory])
	capacity := b.Allocatable[corev1.ResourceMemory]
	if b.MemoryCapacity > 0 {
		r.OomScoreAdj = oomScoreAdj(pod, c, b.MemoryCapacity)
	} else {
		r.OomScoreAdj = oomScoreAdj(pod, c, capacity.Value())
	}
	return r
}

// podResources are the pod's requests and limits of cpu and memory as
// upstream's PodRequests/PodLimits: the larger of the regular containers
// plus sidecars and any init container (with the sidecars before it).
func podResources(pod *corev1.Pod) (requests, limits corev1.ResourceList) {
	sum := func(l corev1.ResourceList, r corev1.ResourceList) {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := r[name]; ok {
				s := l[name]
				s.Add(q)
				l[name] = s
			}
		}
	}
	maxOf := func(l corev1.ResourceList, r corev1.ResourceList) {
		for name, q := range r {
			if cur, ok := l[name]; !ok || q.Cmp(cur) > 0 {
				l[name] = q
			}
		}
	}
	compute := func(get func(*corev1.Container) corev1.ResourceList) corev1.ResourceList {
		regular, sidecars, initMax := corev1.ResourceList{}, corev1.ResourceList{}, corev1.ResourceList{}
		for i := range pod.Spec.Containers {
			sum(regular, get(&pod.Spec.Containers[i]))
		}
		for i := range pod.Spec.InitContainers {
			c := &pod.Spec.InitContainers[i]
			if isSidecar(c) {
				sum(sidecars, get(c))
				maxOf(initMax, sidecars.DeepCopy())
				continue
			}
			with := sidecars.DeepCopy()
			sum(with, get(c))
			maxOf(initMax, with)
		}
		sum(regular, sidecars)
		maxOf(regular, initMax)
		return regular
	}
	return compute(func(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests }),
		compute(func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits })
}

// cgroupParent is the pod's cgroup under the kubepods hierarchy
// (cgroupfs names): /kubepods/pod<uid> for Guaranteed pods,
// /kubepods/burstable/pod<uid> and /kubepods/besteffort/pod<uid>.
func cgroupParent(pod *corev1.Pod) string {
	switch qosClass(pod) {
	case corev1.PodQOSGuaranteed:
		return "/kubepods/pod" + string(pod.UID)
	case corev1.PodQOSBurstable:
		return "/kubepods/burstable/pod" + string(pod.UID)
	}
	return "/kubepods/besteffort/pod" + string(pod.UID)
}

// removePodCgroups removes the (empty) cgroup directories of the pod of
// uid that the runtime created under root (every cgroup v1 controller, or
// the cgroup v2 hierarchy), best effort.
func removePodCgroups(root string, uid types.UID) {
	if root == "" {
		return
	}
	dirs, _ := os.ReadDir(root)
	for _, parent := range []string{"/kubepods/pod", "/kubepods/burstable/pod", "/kubepods/besteffort/pod"} {
		parent += string(uid)
		for _, d := range dirs {
			if d.IsDir() {
				_ = os.Remove(filepath.Join(root, d.Name(), parent))
			}
		}
		_ = os.Remove(filepath.Join(root, parent))
	}
}
