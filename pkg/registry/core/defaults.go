package core

// Defaulting for the core/v1 kinds.
//
// Upstream applies these defaults every time an object is decoded (from a
// request body or from storage), through SetDefaults_* functions in
// k8s.io/kubernetes/pkg/apis/core/v1/defaults.go plus a generated walker
// (zz_generated.defaults.go) that visits every nested struct. Here the walk
// is written out by hand: each Default<Kind> calls the building blocks for
// the structs it contains.
//
// Defaulting only fills in fields the user left empty; it never rejects
// anything (that is validation's job) and never overwrites a value that is
// already set.

import (
	"reflect"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ptrOf returns a pointer to a copy of v.
func ptrOf[T any](v T) *T { return &v }

// DefaultPod applies the defaults of a Pod: everything a PodSpec gets (see
// DefaultPodSpec) plus the few defaults that upstream only applies to real
// Pods and not to pod templates embedded in other objects (so that adding a
// default never changes the template of an existing Deployment).
func DefaultPod(pod *corev1.Pod) {
	spec := &pod.Spec
	// Requests default to limits, per container, for resources that have a
	// limit but no request.
	for i := range spec.Containers {
		defaultRequestsFromLimits(&spec.Containers[i].Resources)
	}
	for i := range spec.InitContainers {
		defaultRequestsFromLimits(&spec.InitContainers[i].Resources)
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptrOf(corev1.DefaultEnableServiceLinks)
	}
	// With host networking every container port is also a host port.
	if spec.HostNetwork {
		for _, list := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
			for i := range list {
				for j := range list[i].Ports {
					if list[i].Ports[j].HostPort == 0 {
						list[i].Ports[j].HostPort = list[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
	// Simplification: upstream's PodLevelResources defaulting (deriving
	// spec.resources requests/limits from the containers when spec.resources
	// is partly set) is not implemented.
	DefaultPodSpec(spec)
	SyncPodIPs(&pod.Status)
}

// SyncPodIPs keeps the singular and plural IP fields of a pod's status in
// step, as upstream's v1 conversion does on every write: a client that sets
// only status.podIP (an older kubelet, kwok) gets status.podIPs = [podIP],
// and podIP is always podIPs[0]; when both are set and disagree, podIP
// wins (for older clients). The same for hostIP/hostIPs.
func SyncPodIPs(st *corev1.PodStatus) {
	if st.PodIP != "" && (len(st.PodIPs) == 0 || st.PodIPs[0].IP != st.PodIP) {
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}
	if len(st.PodIPs) > 0 {
		st.PodIP = st.PodIPs[0].IP
	}
	if st.HostIP != "" && (len(st.HostIPs) == 0 || st.HostIPs[0].IP != st.HostIP) {
		st.HostIPs = []corev1.HostIP{{IP: st.HostIP}}
	}
	if len(st.HostIPs) > 0 {
		st.HostIP = st.HostIPs[0].IP
	}
}

// DefaultPodTemplate applies the defaults of a PodTemplate object.
func DefaultPodTemplate(pt *corev1.PodTemplate) {
	DefaultPodTemplateSpec(&pt.Template)
}

// DefaultPodTemplateSpec applies the defaults of a pod template embedded in
// another object (PodTemplate, Deployment, Job, ...).
func DefaultPodTemplateSpec(t *corev1.PodTemplateSpec) {
	DefaultPodSpec(&t.Spec)
}

// DefaultPodSpec applies the defaults shared by Pods and pod templates:
// pod-level fields, volumes and every container.
func DefaultPodSpec(spec *corev1.PodSpec) {
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrOf(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	SyncServiceAccountAlias(spec)
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		// EphemeralContainerCommon has exactly the fields of Container.
		defaultContainer((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundUpResourceList(spec.Overhead)
	if spec.Resources != nil {
		roundUpResourceList(spec.Resources.Limits)
		roundUpResourceList(spec.Resources.Requests)
	}
}

func defaultRequestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = limit.DeepCopy()
		}
	}
}

func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil {
			if vf.FieldRef != nil {
				defaultFieldSelector(vf.FieldRef)
			}
			if vf.FileKeyRef != nil && vf.FileKeyRef.Optional == nil {
				vf.FileKeyRef.Optional = ptrOf(false)
			}
		}
	}
	roundUpResourceList(c.Resources.Limits)
	roundUpResourceList(c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			defaultProbe(p)
		}
	}
	if c.Lifecycle != nil {
		for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil && h.HTTPGet != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

// defaultPullPolicy picks the image pull policy from the image tag: images
// tagged :latest (or with neither tag nor digest, which means :latest) are
// pulled Always, everything else IfNotPresent. An image that does not parse
// as a reference also gets IfNotPresent (validation reports it later).
func defaultPullPolicy(image string) corev1.PullPolicy {
	if imageTag(image) == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// imageReference is the grammar of a container image reference
// (github.com/distribution/reference): [domain/]path[:tag][@digest].
// Only the tag is captured; the rest is matched to reject malformed images.
var imageReference = regexp.MustCompile(
	`^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?/)?` + // domain
		`[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*` + // path
		`(?::([\w][\w.-]{0,127}))?` + // tag
		`(@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`) // digest

// imageTag returns the tag of an image reference: "latest" when there is
// neither a tag nor a digest, "" when there is only a digest or the
// reference does not parse.
func imageTag(image string) string {
	m := imageReference.FindStringSubmatch(image)
	if m == nil {
		return ""
	}
	tag, digest := m[1], m[2]
	if tag == "" && digest == "" {
		return "latest"
	}
	return tag
}

func defaultProbe(p *corev1.Probe) {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if p.HTTPGet != nil {
		defaultHTTPGet(p.HTTPGet)
	}
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptrOf("")
	}
}

func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

func defaultFieldSelector(s *corev1.ObjectFieldSelector) {
	if s.APIVersion == "" {
		s.APIVersion = "v1"
	}
}

func defaultVolume(v *corev1.Volume) {
	src := &v.VolumeSource
	if len(setVolumeSources(src)) == 0 {
		src.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = ptrOf(corev1.HostPathUnset)
	}
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = ptrOf(corev1.SecretVolumeSourceDefaultMode)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = ptrOf(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if d := src.DownwardAPI; d != nil {
		if d.DefaultMode == nil {
			d.DefaultMode = ptrOf(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		for i := range d.Items {
			if d.Items[i].FieldRef != nil {
				defaultFieldSelector(d.Items[i].FieldRef)
			}
		}
	}
	if p := src.Projected; p != nil {
		if p.DefaultMode == nil {
			p.DefaultMode = ptrOf(corev1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range p.Sources {
			s := &p.Sources[i]
			if s.DownwardAPI != nil {
				for j := range s.DownwardAPI.Items {
					if s.DownwardAPI.Items[j].FieldRef != nil {
						defaultFieldSelector(s.DownwardAPI.Items[j].FieldRef)
					}
				}
			}
			if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
				s.ServiceAccountToken.ExpirationSeconds = ptrOf(int64(3600))
			}
		}
	}
	if e := src.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
		defaultPersistentVolumeClaimSpec(&e.VolumeClaimTemplate.Spec)
	}
	if img := src.Image; img != nil && img.PullPolicy == "" {
		img.PullPolicy = defaultPullPolicy(img.Reference)
	}
	// Declarative (+default) values of the legacy in-tree volume plugins.
	if r := src.RBD; r != nil {
		defaultRBD(&r.RBDPool, &r.RadosUser, &r.Keyring)
	}
	if i := src.ISCSI; i != nil && i.ISCSIInterface == "" {
		i.ISCSIInterface = "default"
	}
	if a := src.AzureDisk; a != nil {
		defaultAzureDisk(a)
	}
	if s := src.ScaleIO; s != nil {
		defaultScaleIO(&s.StorageMode, &s.FSType)
	}
}

func defaultRBD(pool, user, keyring *string) {
	if *pool == "" {
		*pool = "rbd"
	}
	if *user == "" {
		*user = "admin"
	}
	if *keyring == "" {
		*keyring = "/etc/ceph/keyring"
	}
}

func defaultAzureDisk(a *corev1.AzureDiskVolumeSource) {
	if a.CachingMode == nil {
		a.CachingMode = ptrOf(corev1.AzureDataDiskCachingReadWrite)
	}
	if a.FSType == nil {
		a.FSType = ptrOf("ext4")
	}
	if a.ReadOnly == nil {
		a.ReadOnly = ptrOf(false)
	}
	if a.Kind == nil {
		a.Kind = ptrOf(corev1.AzureSharedBlobDisk)
	}
}

func defaultScaleIO(mode, fsType *string) {
	if *mode == "" {
		*mode = "ThinProvisioned"
	}
	if *fsType == "" {
		*fsType = "xfs"
	}
}

// setVolumeSources returns the JSON names of the non-nil volume source
// pointers of a VolumeSource or PersistentVolumeSource (passed as a pointer).
func setVolumeSources(src any) []string {
	v := reflect.ValueOf(src).Elem()
	var names []string
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			names = append(names, strings.Split(v.Type().Field(i).Tag.Get("json"), ",")[0])
		}
	}
	return names
}

// roundUpResourceList rounds every quantity up to milli-units (upstream keeps
// this for API compatibility: "0.0001" cpu becomes "1m").
func roundUpResourceList(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(resource.Milli)
		list[name] = q
	}
}

// DefaultService applies the defaults of a Service.
//
// Not done here (upstream does it in the Service registry when allocating
// cluster IPs, because it depends on the cluster's IP families):
// spec.clusterIP(s), spec.ipFamilies and spec.ipFamilyPolicy, and node ports.
func DefaultService(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityNone {
		spec.SessionAffinityConfig = nil
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		c := spec.SessionAffinityConfig
		if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptrOf(corev1.DefaultClientIPServiceAffinitySeconds)},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if externallyAccessible(svc) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil {
		switch spec.Type {
		case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
			spec.InternalTrafficPolicy = ptrOf(corev1.ServiceInternalTrafficPolicyCluster)
		}
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			spec.AllocateLoadBalancerNodePorts = ptrOf(true)
		}
		for i := range svc.Status.LoadBalancer.Ingress {
			ing := &svc.Status.LoadBalancer.Ingress[i]
			if ing.IP != "" && ing.IPMode == nil {
				ing.IPMode = ptrOf(corev1.LoadBalancerIPModeVIP)
			}
		}
	}
}

// externallyAccessible reports whether traffic can reach the service from
// outside the cluster: LoadBalancer and NodePort services, and ClusterIP
// services with external IPs.
func externallyAccessible(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeClusterIP:
		return len(svc.Spec.ExternalIPs) > 0
	}
	return false
}

// DefaultEndpoints applies the defaults of an Endpoints object.
func DefaultEndpoints(ep *corev1.Endpoints) {
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if ep.Subsets[i].Ports[j].Protocol == "" {
				ep.Subsets[i].Ports[j].Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// DefaultNode applies the defaults of a Node: allocatable defaults to
// capacity.
func DefaultNode(node *corev1.Node) {
	// spec.podCIDR and spec.podCIDRs are kept in step as upstream's v1
	// conversion does (podCIDR wins when they disagree).
	if c := node.Spec.PodCIDR; c != "" && (len(node.Spec.PodCIDRs) == 0 || node.Spec.PodCIDRs[0] != c) {
		node.Spec.PodCIDRs = []string{c}
	}
	if len(node.Spec.PodCIDRs) > 0 {
		node.Spec.PodCIDR = node.Spec.PodCIDRs[0]
	}
	st := &node.Status
	if st.Allocatable == nil && st.Capacity != nil {
		st.Allocatable = st.Capacity.DeepCopy()
	}
	roundUpResourceList(st.Capacity)
	roundUpResourceList(st.Allocatable)
}

// DefaultNamespace applies the defaults of a Namespace: the immutable
// kubernetes.io/metadata.name label and the Active phase.
func DefaultNamespace(ns *corev1.Namespace) {
	// A namespace created with generateName has no name yet; upstream sets
	// the label again in the strategy once the name is known.
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// DefaultConfigMap applies the defaults of a ConfigMap (an empty data map,
// which does not show in JSON).
func DefaultConfigMap(cm *corev1.ConfigMap) {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
}

// DefaultSecret applies the defaults of a Secret: type Opaque.
func DefaultSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
}

// DefaultServiceAccount applies the defaults of a ServiceAccount. Upstream
// has none; the function exists so every kind has one.
func DefaultServiceAccount(*corev1.ServiceAccount) {}

// DefaultEvent applies the defaults of a core/v1 Event. Upstream has none.
func DefaultEvent(*corev1.Event) {}

// DefaultPersistentVolume applies the defaults of a PersistentVolume.
func DefaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	spec := &pv.Spec
	if spec.PersistentVolumeReclaimPolicy == "" {
		spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if spec.VolumeMode == nil {
		spec.VolumeMode = ptrOf(corev1.PersistentVolumeFilesystem)
	}
	roundUpResourceList(spec.Capacity)
	if spec.HostPath != nil && spec.HostPath.Type == nil {
		spec.HostPath.Type = ptrOf(corev1.HostPathUnset)
	}
	if r := spec.RBD; r != nil {
		defaultRBD(&r.RBDPool, &r.RadosUser, &r.Keyring)
	}
	if i := spec.ISCSI; i != nil && i.ISCSIInterface == "" {
		i.ISCSIInterface = "default"
	}
	if a := spec.AzureDisk; a != nil {
		defaultAzureDisk(a)
	}
	if s := spec.ScaleIO; s != nil {
		defaultScaleIO(&s.StorageMode, &s.FSType)
	}
}

// DefaultPersistentVolumeClaim applies the defaults of a
// PersistentVolumeClaim. StatefulSet volumeClaimTemplates get the same
// defaults (including status.phase Pending).
func DefaultPersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	defaultPersistentVolumeClaimSpec(&pvc.Spec)
	roundUpResourceList(pvc.Status.Capacity)
	roundUpResourceList(pvc.Status.AllocatedResources)
}

func defaultPersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.VolumeMode == nil {
		spec.VolumeMode = ptrOf(corev1.PersistentVolumeFilesystem)
	}
	roundUpResourceList(spec.Resources.Limits)
	roundUpResourceList(spec.Resources.Requests)
}

// DefaultLimitRange applies the defaults of a LimitRange. For Container
// limits: the default limit falls back to max, and the default request falls
// back to the default limit, then to min.
func DefaultLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type == corev1.LimitTypeContainer {
			if item.Default == nil {
				item.Default = corev1.ResourceList{}
			}
			if item.DefaultRequest == nil {
				item.DefaultRequest = corev1.ResourceList{}
			}
			fillMissing(item.Default, item.Max)
			fillMissing(item.DefaultRequest, item.Default)
			fillMissing(item.DefaultRequest, item.Min)
		}
		for _, l := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
			roundUpResourceList(l)
		}
	}
}

// fillMissing copies into dst every entry of src that dst lacks.
func fillMissing(dst, src corev1.ResourceList) {
	for name, q := range src {
		if _, ok := dst[name]; !ok {
			dst[name] = q.DeepCopy()
		}
	}
}

// DefaultResourceQuota applies the defaults of a ResourceQuota (only the
// rounding of quantities).
func DefaultResourceQuota(rq *corev1.ResourceQuota) {
	roundUpResourceList(rq.Spec.Hard)
	roundUpResourceList(rq.Status.Hard)
	roundUpResourceList(rq.Status.Used)
}

// SyncServiceAccountAlias keeps the deprecated spec.serviceAccount equal to
// spec.serviceAccountName, as upstream's v1 conversion does: a spec that
// only sets the old field gets it copied into the new one.
func SyncServiceAccountAlias(spec *corev1.PodSpec) {
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount //nolint:staticcheck
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName //nolint:staticcheck
}
