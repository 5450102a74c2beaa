package intern

import (
	"strings"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Transform is an informer transform (cache.TransformFunc): it interns a
// *corev1.Pod in place and passes every other object through.
func (in *Interner) Transform(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		in.Pod(p)
	}
	return obj, nil
}

// Pod replaces the parts of p that equal a canonical instance by that
// instance, and makes its other shareable parts canonical. p must not be
// shared yet (a freshly decoded object) and is read-only afterwards.
func (in *Interner) Pod(p *corev1.Pod) {
	if p == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.objectMeta(&p.ObjectMeta)
	in.podSpec(&p.Spec)
	in.podStatus(&p.Status)
}

func (in *Interner) objectMeta(m *metav1.ObjectMeta) {
	// Name, UID and resourceVersion are unique to the object.
	m.GenerateName = in.str(m.GenerateName)
	m.Namespace = in.str(m.Namespace)
	m.Labels = in.stringMap(m.Labels)
	m.Annotations = in.stringMap(m.Annotations)
	m.OwnerReferences = slice(in, kOwnerRefs, m.OwnerReferences)
	m.Finalizers = in.strSlice(m.Finalizers)
}

// generatedVolumePrefix is the name prefix of the projected
// service-account volume the API server's ServiceAccount admission adds
// to a pod ("kube-api-access-" and five random characters): containers
// mounting it differ from pod to pod, so whole container lists are not
// worth a table entry.
const generatedVolumePrefix = "kube-api-access-"

func (in *Interner) podSpec(s *corev1.PodSpec) {
	for i := range s.Volumes {
		in.volumeSource(&s.Volumes[i].VolumeSource)
	}
	s.InitContainers = in.containers(s.InitContainers, s.Volumes)
	s.Containers = in.containers(s.Containers, s.Volumes)
	s.RestartPolicy = strType(in, s.RestartPolicy)
	s.TerminationGracePeriodSeconds = scalar(in, kInt64, s.TerminationGracePeriodSeconds)
	s.ActiveDeadlineSeconds = scalar(in, kInt64, s.ActiveDeadlineSeconds)
	s.DNSPolicy = strType(in, s.DNSPolicy)
	s.NodeSelector = in.stringMap(s.NodeSelector)
	s.ServiceAccountName = in.str(s.ServiceAccountName)
	s.DeprecatedServiceAccount = in.str(s.DeprecatedServiceAccount)
	s.AutomountServiceAccountToken = scalar(in, kBool, s.AutomountServiceAccountToken)
	s.NodeName = in.str(s.NodeName)
	s.ShareProcessNamespace = scalar(in, kBool, s.ShareProcessNamespace)
	s.SecurityContext = ptr(in, kPodSecurityContext, s.SecurityContext)
	s.ImagePullSecrets = slice(in, kLocalObjectRefs, s.ImagePullSecrets)
	s.Subdomain = in.str(s.Subdomain)
	s.Affinity = ptr(in, kAffinity, s.Affinity)
	s.SchedulerName = in.str(s.SchedulerName)
	s.Tolerations = slice(in, kTolerations, s.Tolerations)
	s.HostAliases = slice(in, kHostAliases, s.HostAliases)
	s.PriorityClassName = in.str(s.PriorityClassName)
	s.Priority = scalar(in, kInt32, s.Priority)
	s.DNSConfig = ptr(in, kDNSConfig, s.DNSConfig)
	s.ReadinessGates = slice(in, kReadinessGates, s.ReadinessGates)
	s.EnableServiceLinks = scalar(in, kBool, s.EnableServiceLinks)
	s.PreemptionPolicy = in.preemptionPolicy(s.PreemptionPolicy)
	s.Overhead = in.resourceList(s.Overhead)
	s.TopologySpreadConstraints = slice(in, kTopologySpread, s.TopologySpreadConstraints)
	s.SetHostnameAsFQDN = scalar(in, kBool, s.SetHostnameAsFQDN)
	s.OS = ptr(in, kPodOS, s.OS)
	s.HostUsers = scalar(in, kBool, s.HostUsers)
	s.SchedulingGates = slice(in, kSchedulingGates, s.SchedulingGates)
	s.ResourceClaims = slice(in, kPodResourceClaims, s.ResourceClaims)
	s.Resources = ptr(in, kResourceRequirements, s.Resources)
}

func (in *Interner) volumeSource(v *corev1.VolumeSource) {
	// Claims, ephemeral volumes and the rest name per-pod objects (or are
	// rare): left alone.
	v.Projected = ptr(in, kProjected, v.Projected)
	v.ConfigMap = ptr(in, kConfigMapVolume, v.ConfigMap)
	v.Secret = ptr(in, kSecretVolume, v.Secret)
	v.EmptyDir = ptr(in, kEmptyDir, v.EmptyDir)
	v.HostPath = ptr(in, kHostPath, v.HostPath)
	v.DownwardAPI = ptr(in, kDownwardAPIVolume, v.DownwardAPI)
}

func (in *Interner) containers(cs []corev1.Container, volumes []corev1.Volume) []corev1.Container {
	if len(cs) == 0 {
		return cs
	}
	whole := true
	for i := range cs {
		for j := range cs[i].VolumeMounts {
			if strings.HasPrefix(cs[i].VolumeMounts[j].Name, generatedVolumePrefix) {
				whole = false
			}
		}
	}
	if whole {
		in.begin(kContainers)
		for i := range cs {
			in.appendMsg(&cs[i])
		}
		if q, n, ok := in.lookup(); ok {
			return unsafe.Slice((*corev1.Container)(q), n)
		}
	}
	for i := range cs {
		in.container(&cs[i], volumes)
	}
	if whole {
		// Share the fields first (the list may be unique while its
		// images and resources are not), then the list.
		cs = slice(in, kContainers, cs)
	}
	return cs
}

func (in *Interner) container(c *corev1.Container, volumes []corev1.Volume) {
	c.Name = in.str(c.Name)
	c.Image = in.str(c.Image)
	c.Command = in.strSlice(c.Command)
	c.Args = in.strSlice(c.Args)
	c.WorkingDir = in.str(c.WorkingDir)
	c.Ports = slice(in, kContainerPorts, c.Ports)
	c.EnvFrom = slice(in, kEnvFrom, c.EnvFrom)
	c.Env = slice(in, kEnv, c.Env)
	c.Resources.Limits = in.resourceList(c.Resources.Limits)
	c.Resources.Requests = in.resourceList(c.Resources.Requests)
	c.Resources.Claims = slice(in, kResourceClaims, c.Resources.Claims)
	c.ResizePolicy = slice(in, kResizePolicy, c.ResizePolicy)
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		m.Name = volumeName(m.Name, volumes)
		if !strings.HasPrefix(m.Name, generatedVolumePrefix) {
			m.Name = in.str(m.Name)
		}
		m.MountPath = in.str(m.MountPath)
		m.SubPath = in.str(m.SubPath)
	}
	c.LivenessProbe = ptr(in, kProbe, c.LivenessProbe)
	c.ReadinessProbe = ptr(in, kProbe, c.ReadinessProbe)
	c.StartupProbe = ptr(in, kProbe, c.StartupProbe)
	c.Lifecycle = ptr(in, kLifecycle, c.Lifecycle)
	c.TerminationMessagePath = in.str(c.TerminationMessagePath)
	c.TerminationMessagePolicy = strType(in, c.TerminationMessagePolicy)
	c.ImagePullPolicy = strType(in, c.ImagePullPolicy)
	c.SecurityContext = ptr(in, kSecurityContext, c.SecurityContext)
}

// volumeName returns the pod's volume's copy of a mount's volume name.
func volumeName(name string, volumes []corev1.Volume) string {
	for i := range volumes {
		if volumes[i].Name == name {
			return volumes[i].Name
		}
	}
	return name
}

func (in *Interner) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	in.begin(kResourceList)
	for _, k := range sortedKeys(in, l) {
		in.appendString(k)
		q := l[corev1.ResourceName(k)]
		in.appendMsg(&q)
	}
	if p, _, ok := in.lookup(); ok {
		return pointerMap[corev1.ResourceList](p)
	}
	if !in.admit() {
		return l
	}
	in.store(mapPointer(l), 0)
	return l
}

func (in *Interner) preemptionPolicy(p *corev1.PreemptionPolicy) *corev1.PreemptionPolicy {
	if p == nil {
		return nil
	}
	in.begin(kPreemptionPolicy)
	in.key = append(in.key, *p...)
	if q, _, ok := in.lookup(); ok {
		return (*corev1.PreemptionPolicy)(q)
	}
	if !in.admit() {
		return p
	}
	c := new(corev1.PreemptionPolicy) // 16 bytes holding a pointer: not a tiny object
	*c = strType(in, *p)
	in.begin(kPreemptionPolicy)
	in.key = append(in.key, *p...)
	in.store(unsafe.Pointer(c), 0)
	return c
}

func (in *Interner) podStatus(s *corev1.PodStatus) {
	s.Phase = strType(in, s.Phase)
	s.Reason = in.str(s.Reason)
	s.NominatedNodeName = in.str(s.NominatedNodeName)
	s.HostIP = in.str(s.HostIP)
	s.HostIPs = slice(in, kHostIPs, s.HostIPs)
	s.QOSClass = strType(in, s.QOSClass)
	for i := range s.Conditions {
		c := &s.Conditions[i]
		c.Type = strType(in, c.Type)
		c.Status = strType(in, c.Status)
		c.Reason = in.str(c.Reason)
	}
	for _, st := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for i := range st {
			c := &st[i]
			c.Name = in.str(c.Name)
			c.Image = in.str(c.Image)
			c.ImageID = in.str(c.ImageID)
		}
	}
}
