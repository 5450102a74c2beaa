package node

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Kind is the type of a graph vertex the authorizer asks about.
type Kind byte

const (
	Pod Kind = iota + 1
	Secret
	ConfigMap
	PersistentVolumeClaim
	PersistentVolume
	ServiceAccount
	ResourceClaim
	VolumeAttachment
	ResourceSlice
)

type nsName struct{ ns, name string }

// ref is an object a pod (or a persistent volume) refers to.
type ref struct {
	kind Kind
	nsName
}

// podEntry is what a pod bound to a node contributes.
type podEntry struct {
	node      string
	uid       string
	ephemeral int      // number of ephemeral containers (they may add references)
	claims    []string // resource claim names from the status
	refs      []ref
}

// pvEntry is what a persistent volume contributes: PV → its claim, its
// secrets → PV.
type pvEntry struct {
	claim    nsName
	hasClaim bool
	secrets  []nsName
}

// Graph holds the relationships between nodes and the objects their pods
// use. It is safe for concurrent use; the zero value is not (NewGraph).
type Graph struct {
	mu sync.RWMutex
	// pods bound to a node.
	pods map[nsName]*podEntry
	// refs counts, per referenced object, the pods of each node using it.
	refs map[ref]map[string]int
	pvs  map[string]*pvEntry
	// secretPVs counts, per secret, the persistent volumes naming it.
	secretPVs map[nsName]map[string]int
	vas       map[string]string // volume attachment → node
	slices    map[string]string // resource slice → node
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{
		pods:      map[nsName]*podEntry{},
		refs:      map[ref]map[string]int{},
		pvs:       map[string]*pvEntry{},
		secretPVs: map[nsName]map[string]int{},
		vas:       map[string]string{},
		slices:    map[string]string{},
	}
}

// Set adds or replaces a Pod, PersistentVolume, VolumeAttachment or
// ResourceSlice (other objects are ignored).
func (g *Graph) Set(obj runtime.Object) {
	if p, ok := obj.(*corev1.Pod); ok && g.podUnchanged(p) {
		return // a status update: the edges are those of the pod's spec
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.set(obj)
}

func (g *Graph) set(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Pod:
		g.setPod(o)
	case *corev1.PersistentVolume:
		e := pvEdges(o)
		g.deletePV(o.Name)
		g.pvs[o.Name] = e
		for _, s := range e.secrets {
			m := g.secretPVs[s]
			if m == nil {
				m = map[string]int{}
				g.secretPVs[s] = m
			}
			m[o.Name]++
		}
	case *storagev1.VolumeAttachment:
		g.vas[o.Name] = o.Spec.NodeName
	case *resourcev1.ResourceSlice:
		if o.Spec.NodeName != nil && *o.Spec.NodeName != "" {
			g.slices[o.Name] = *o.Spec.NodeName
		} else {
			delete(g.slices, o.Name)
		}
	}
}

// Delete removes an object Set added.
func (g *Graph) Delete(obj runtime.Object) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch o := obj.(type) {
	case *corev1.Pod:
		g.deletePod(nsName{o.Namespace, o.Name})
	case *corev1.PersistentVolume:
		g.deletePV(o.Name)
	case *storagev1.VolumeAttachment:
		delete(g.vas, o.Name)
	case *resourcev1.ResourceSlice:
		delete(g.slices, o.Name)
	}
}

// Replace drops every object of example's type and adds objs (a relist),
// in one step: no request sees the graph half filled.
func (g *Graph) Replace(example runtime.Object, objs []runtime.Object) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch example.(type) {
	case *corev1.Pod:
		g.pods, g.refs = map[nsName]*podEntry{}, map[ref]map[string]int{}
	case *corev1.PersistentVolume:
		g.pvs, g.secretPVs = map[string]*pvEntry{}, map[nsName]map[string]int{}
	case *storagev1.VolumeAttachment:
		g.vas = map[string]string{}
	case *resourcev1.ResourceSlice:
		g.slices = map[string]string{}
	}
	for _, o := range objs {
		g.set(o)
	}
}

// podUnchanged reports whether p contributes the edges it already does:
// same node, same uid, no new ephemeral containers, same claims (a pod's
// volumes and containers are otherwise immutable).
func (g *Graph) podUnchanged(p *corev1.Pod) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	old := g.pods[nsName{p.Namespace, p.Name}]
	if old == nil {
		return p.Spec.NodeName == ""
	}
	if old.node != p.Spec.NodeName || old.uid != string(p.UID) || old.ephemeral != len(p.Spec.EphemeralContainers) {
		return false
	}
	i := 0
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.ResourceClaimName == nil {
			continue
		}
		if i >= len(old.claims) || old.claims[i] != *s.ResourceClaimName {
			return false
		}
		i++
	}
	return i == len(old.claims)
}

// setPod replaces what p contributes (g.mu held).
func (g *Graph) setPod(p *corev1.Pod) {
	k := nsName{p.Namespace, p.Name}
	g.deletePod(k)
	if p.Spec.NodeName == "" {
		return
	}
	claims := claimNames(p)
	e := &podEntry{node: p.Spec.NodeName, uid: string(p.UID), ephemeral: len(p.Spec.EphemeralContainers), claims: claims}
	e.refs = podRefs(p, claims)
	g.pods[k] = e
	for _, r := range e.refs {
		m := g.refs[r]
		if m == nil {
			m = map[string]int{}
			g.refs[r] = m
		}
		m[e.node]++
	}
}

func (g *Graph) deletePod(k nsName) {
	e := g.pods[k]
	if e == nil {
		return
	}
	delete(g.pods, k)
	for _, r := range e.refs {
		m := g.refs[r]
		if m[e.node] <= 1 {
			delete(m, e.node)
			if len(m) == 0 {
				delete(g.refs, r)
			}
		} else {
			m[e.node]--
		}
	}
}

func (g *Graph) deletePV(name string) {
	e := g.pvs[name]
	if e == nil {
		return
	}
	delete(g.pvs, name)
	for _, s := range e.secrets {
		m := g.secretPVs[s]
		if m[name] <= 1 {
			delete(m, name)
			if len(m) == 0 {
				delete(g.secretPVs, s)
			}
		} else {
			m[name]--
		}
	}
}

// HasPath reports whether the object kind namespace/name is related to
// node: a pod bound to it, an object such a pod uses (a persistent
// volume through its bound claim, a secret through such a volume), a
// volume attachment or resource slice of the node.
func (g *Graph) HasPath(node string, kind Kind, namespace, name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	switch kind {
	case Pod:
		e := g.pods[nsName{namespace, name}]
		return e != nil && e.node == node
	case PersistentVolume:
		return g.pvReachable(node, name)
	case VolumeAttachment:
		n, ok := g.vas[name]
		return ok && n == node
	case ResourceSlice:
		n, ok := g.slices[name]
		return ok && n == node
	}
	if g.refs[ref{kind, nsName{namespace, name}}][node] > 0 {
		return true
	}
	if kind == Secret {
		for pv := range g.secretPVs[nsName{namespace, name}] {
			if g.pvReachable(node, pv) {
				return true
			}
		}
	}
	return false
}

func (g *Graph) pvReachable(node, pv string) bool {
	e := g.pvs[pv]
	return e != nil && e.hasClaim && g.refs[ref{PersistentVolumeClaim, e.claim}][node] > 0
}

func claimNames(p *corev1.Pod) []string {
	var out []string
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			out = append(out, *s.ResourceClaimName)
		}
	}
	return out
}

// podRefs are the objects a pod uses, as upstream's graph populator
// visits them: secrets and configmaps (image pull secrets, env, envFrom,
// volumes and projected sources, volume plugins' secret references),
// claims (persistentVolumeClaim and generic ephemeral volumes), its
// service account and its allocated resource claims.
func podRefs(p *corev1.Pod, claims []string) []ref {
	ns := p.Namespace
	seen := map[ref]bool{}
	var out []ref
	add := func(k Kind, name string) {
		if name == "" {
			return
		}
		r := ref{k, nsName{ns, name}}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, s := range p.Spec.ImagePullSecrets {
		add(Secret, s.Name)
	}
	env := func(envFrom []corev1.EnvFromSource, envs []corev1.EnvVar) {
		for _, f := range envFrom {
			if f.SecretRef != nil {
				add(Secret, f.SecretRef.Name)
			}
			if f.ConfigMapRef != nil {
				add(ConfigMap, f.ConfigMapRef.Name)
			}
		}
		for _, e := range envs {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add(Secret, e.ValueFrom.SecretKeyRef.Name)
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add(ConfigMap, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	}
	for i := range p.Spec.InitContainers {
		env(p.Spec.InitContainers[i].EnvFrom, p.Spec.InitContainers[i].Env)
	}
	for i := range p.Spec.Containers {
		env(p.Spec.Containers[i].EnvFrom, p.Spec.Containers[i].Env)
	}
	for i := range p.Spec.EphemeralContainers {
		env(p.Spec.EphemeralContainers[i].EnvFrom, p.Spec.EphemeralContainers[i].Env)
	}
	for i := range p.Spec.Volumes {
		v := &p.Spec.Volumes[i]
		switch {
		case v.Secret != nil:
			add(Secret, v.Secret.SecretName)
		case v.ConfigMap != nil:
			add(ConfigMap, v.ConfigMap.Name)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					add(Secret, s.Secret.Name)
				}
				if s.ConfigMap != nil {
					add(ConfigMap, s.ConfigMap.Name)
				}
			}
		case v.PersistentVolumeClaim != nil:
			add(PersistentVolumeClaim, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			add(PersistentVolumeClaim, p.Name+"-"+v.Name)
		case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
			add(Secret, v.CSI.NodePublishSecretRef.Name)
		case v.AzureFile != nil:
			add(Secret, v.AzureFile.SecretName)
		case v.CephFS != nil && v.CephFS.SecretRef != nil:
			add(Secret, v.CephFS.SecretRef.Name)
		case v.Cinder != nil && v.Cinder.SecretRef != nil:
			add(Secret, v.Cinder.SecretRef.Name)
		case v.FlexVolume != nil && v.FlexVolume.SecretRef != nil:
			add(Secret, v.FlexVolume.SecretRef.Name)
		case v.RBD != nil && v.RBD.SecretRef != nil:
			add(Secret, v.RBD.SecretRef.Name)
		case v.ISCSI != nil && v.ISCSI.SecretRef != nil:
			add(Secret, v.ISCSI.SecretRef.Name)
		case v.ScaleIO != nil && v.ScaleIO.SecretRef != nil:
			add(Secret, v.ScaleIO.SecretRef.Name)
		case v.StorageOS != nil && v.StorageOS.SecretRef != nil:
			add(Secret, v.StorageOS.SecretRef.Name)
		}
	}
	add(ServiceAccount, p.Spec.ServiceAccountName)
	for _, c := range claims {
		add(ResourceClaim, c)
	}
	return out
}

// pvEdges are a persistent volume's claim and the secrets its source
// names (a reference without a namespace means the claim's).
func pvEdges(pv *corev1.PersistentVolume) *pvEntry {
	e := &pvEntry{}
	claimNS := ""
	if c := pv.Spec.ClaimRef; c != nil && c.Name != "" {
		e.claim, e.hasClaim = nsName{c.Namespace, c.Name}, true
		claimNS = c.Namespace
	}
	seen := map[nsName]bool{}
	add := func(ns, name string) {
		if name == "" {
			return
		}
		if ns == "" {
			ns = claimNS
		}
		k := nsName{ns, name}
		if !seen[k] {
			seen[k] = true
			e.secrets = append(e.secrets, k)
		}
	}
	addRef := func(r *corev1.SecretReference) {
		if r != nil {
			add(r.Namespace, r.Name)
		}
	}
	s := &pv.Spec.PersistentVolumeSource
	switch {
	case s.CSI != nil:
		addRef(s.CSI.ControllerPublishSecretRef)
		addRef(s.CSI.NodeStageSecretRef)
		addRef(s.CSI.NodePublishSecretRef)
		addRef(s.CSI.ControllerExpandSecretRef)
		addRef(s.CSI.NodeExpandSecretRef)
	case s.AzureFile != nil:
		ns := "default"
		if s.AzureFile.SecretNamespace != nil && *s.AzureFile.SecretNamespace != "" {
			ns = *s.AzureFile.SecretNamespace
		} else if claimNS != "" {
			ns = claimNS
		}
		add(ns, s.AzureFile.SecretName)
	case s.CephFS != nil:
		addRef(s.CephFS.SecretRef)
	case s.Cinder != nil:
		addRef(s.Cinder.SecretRef)
	case s.FlexVolume != nil:
		addRef(s.FlexVolume.SecretRef)
	case s.RBD != nil:
		addRef(s.RBD.SecretRef)
	case s.ISCSI != nil:
		addRef(s.ISCSI.SecretRef)
	case s.ScaleIO != nil:
		addRef(s.ScaleIO.SecretRef)
	case s.StorageOS != nil && s.StorageOS.SecretRef != nil:
		add(s.StorageOS.SecretRef.Namespace, s.StorageOS.SecretRef.Name)
	}
	return e
}

// PodAPIReference is upstream's HasAPIObjectReference: the first kind of
// API object a pod refers to ("" when none), as the NodeRestriction
// admission plugin names it when refusing a mirror pod.
func PodAPIReference(p *corev1.Pod) string {
	if p.Spec.ServiceAccountName != "" {
		return "serviceaccounts"
	}
	var secrets, configMaps bool
	for _, r := range podRefs(p, nil) {
		secrets = secrets || r.kind == Secret
		configMaps = configMaps || r.kind == ConfigMap
	}
	switch {
	case secrets:
		return "secrets"
	case configMaps:
		return "configmaps"
	case len(p.Spec.ResourceClaims) > 0:
		return "resourceclaims"
	}
	for i := range p.Spec.Volumes {
		v := &p.Spec.Volumes[i]
		switch {
		case v.ConfigMap != nil:
			return "configmaps (via configmap volumes)"
		case v.Secret != nil:
			return "secrets (via secret volumes)"
		case v.CSI != nil:
			return "csidrivers (via CSI volumes)"
		case v.Glusterfs != nil:
			return "endpoints (via glusterFS volumes)"
		case v.PersistentVolumeClaim != nil:
			return "persistentvolumeclaims"
		case v.Ephemeral != nil:
			return "persistentvolumeclaims (via ephemeral volumes)"
		case v.AzureFile != nil:
			return "secrets (via azureFile volumes)"
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				switch {
				case s.ConfigMap != nil:
					return "configmaps (via projected volumes)"
				case s.Secret != nil:
					return "secrets (via projected volumes)"
				case s.ServiceAccountToken != nil:
					return "serviceaccounts (via projected volumes)"
				case s.ClusterTrustBundle != nil:
					return "clustertrustbundles"
				case s.PodCertificate != nil:
					return "podcertificates"
				}
			}
		}
	}
	return ""
}
