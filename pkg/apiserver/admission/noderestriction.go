package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/auth/node"
)

// nodeRestriction is upstream's NodeRestriction (off by default, as
// upstream's; kubeadm-style clusters enable it): what a kubelet
// (system:node:<name> in system:nodes) writes is limited to its own node —
// its Node object (no taints, owner references or restricted labels
// changed), mirror pods bound to it that use no API objects, the status
// of its pods, evictions of its pods, PVC status, tokens for its pods, its
// Lease and its CSINode. Requests of other users pass untouched.
type nodeRestriction struct{ d Deps }

var (
	grLeases   = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	grCSINodes = schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}
)

func (*nodeRestriction) Name() string { return "NodeRestriction" }
func (*nodeRestriction) Handles(op Operation) bool {
	return op == Create || op == Update || op == Delete
}

func (p *nodeRestriction) Admit(ctx context.Context, a *Attributes) error {
	nodeName, isNode := node.NodeIdentity(a.UserInfo)
	if !isNode {
		return nil
	}
	if nodeName == "" {
		return forbidden(a, fmt.Errorf("could not determine node from user %q", a.UserInfo.Username))
	}
	switch a.Resource {
	case grPods:
		switch a.Subresource {
		case "":
			return p.pod(ctx, nodeName, a)
		case "status":
			return p.podStatus(nodeName, a)
		case "eviction":
			return p.eviction(ctx, nodeName, a)
		default:
			return forbidden(a, fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", a.Subresource))
		}
	case grNodes:
		return p.node(nodeName, a)
	case grPVCs:
		if a.Subresource != "status" {
			return forbidden(a, fmt.Errorf("may only update PVC status"))
		}
		return p.pvcStatus(nodeName, a)
	case grServiceAccounts:
		return p.serviceAccountToken(ctx, nodeName, a)
	case grLeases:
		return p.lease(nodeName, a)
	case grCSINodes:
		name := a.Name
		if a.Operation == Create {
			if m, err := meta.Accessor(a.Object); err == nil {
				name = m.GetName()
			} else {
				return forbidden(a, fmt.Errorf("unable to access the object name"))
			}
		}
		if name != nodeName {
			return forbidden(a, fmt.Errorf("can only access CSINode with the same name as the requesting node"))
		}
	}
	return nil
}

// existingPod reads a pod from the cache, then from storage when the
// cache does not have it yet.
func (p *nodeRestriction) existingPod(ctx context.Context, a *Attributes, name string) (*corev1.Pod, error) {
	obj, err := p.d.Getter.Get(ctx, grPods, a.Namespace, name)
	if apierrors.IsNotFound(err) {
		obj, err = p.d.Getter.GetConsistent(ctx, grPods, a.Namespace, name)
	}
	if apierrors.IsNotFound(err) {
		return nil, err
	}
	if err != nil {
		return nil, forbidden(a, err)
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, forbidden(a, fmt.Errorf("unexpected type %T", obj))
	}
	return pod, nil
}

func (p *nodeRestriction) pod(ctx context.Context, nodeName string, a *Attributes) error {
	switch a.Operation {
	case Create:
		return p.mirrorPod(ctx, nodeName, a)
	case Delete:
		pod, err := p.existingPod(ctx, a, a.Name)
		if err != nil {
			return err
		}
		if pod.Spec.NodeName != nodeName {
			return forbidden(a, fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", nodeName))
		}
		return nil
	}
	return forbidden(a, fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, nodeName))
}

func (p *nodeRestriction) mirrorPod(ctx context.Context, nodeName string, a *Attributes) error {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return forbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; !mirror {
		return forbidden(a, fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", mirrorPodAnnotation, nodeName))
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", nodeName))
	}
	switch len(pod.OwnerReferences) {
	case 0:
		return forbidden(a, fmt.Errorf("node %q can only create pods with an owner reference set to itself", nodeName))
	case 1:
	default:
		return forbidden(a, fmt.Errorf("node %q can only create pods with a single owner reference set to itself", nodeName))
	}
	owner := pod.OwnerReferences[0]
	if owner.APIVersion != "v1" || owner.Kind != "Node" || owner.Name != nodeName {
		return forbidden(a, fmt.Errorf("node %q can only create pods with an owner reference set to itself", nodeName))
	}
	if owner.Controller == nil || !*owner.Controller {
		return forbidden(a, fmt.Errorf("node %q can only create pods with a controller owner reference set to itself", nodeName))
	}
	if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
		return forbidden(a, fmt.Errorf("node %q must not set blockOwnerDeletion on an owner reference", nodeName))
	}
	obj, err := p.d.Getter.Get(ctx, grNodes, "", nodeName)
	if apierrors.IsNotFound(err) {
		obj, err = p.d.Getter.GetConsistent(ctx, grNodes, "", nodeName)
	}
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return forbidden(a, fmt.Errorf("error looking up node %s to verify uid: %v", nodeName, err))
	}
	if n, ok := obj.(*corev1.Node); ok && owner.UID != n.UID {
		return forbidden(a, fmt.Errorf("node %s UID mismatch: expected %s got %s", nodeName, owner.UID, n.UID))
	}
	if ref := node.PodAPIReference(pod); ref != "" {
		return forbidden(a, fmt.Errorf("node %q can not create pods that reference %s", nodeName, ref))
	}
	return nil
}

func (p *nodeRestriction) podStatus(nodeName string, a *Attributes) error {
	if a.Operation != Update {
		return forbidden(a, fmt.Errorf("unexpected operation %q", a.Operation))
	}
	old, ok := a.OldObject.(*corev1.Pod)
	if !ok {
		return forbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
	}
	if old.Spec.NodeName != nodeName {
		return forbidden(a, fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", nodeName))
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return forbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	if !stringMapsEqual(old.Labels, pod.Labels) {
		return forbidden(a, fmt.Errorf("node %q cannot update labels through pod status", nodeName))
	}
	if !claimStatusesEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses) {
		return forbidden(a, fmt.Errorf("node %q cannot update resource claim statues", nodeName))
	}
	if !equality.Semantic.DeepEqual(old.Status.ExtendedResourceClaimStatus, pod.Status.ExtendedResourceClaimStatus) {
		return forbidden(a, fmt.Errorf("node %q cannot update extended resource claim status", nodeName))
	}
	return nil
}

func stringMapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

func claimStatusesEqual(a, b []corev1.PodResourceClaimStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || (a[i].ResourceClaimName == nil) != (b[i].ResourceClaimName == nil) ||
			(a[i].ResourceClaimName != nil && *a[i].ResourceClaimName != *b[i].ResourceClaimName) {
			return false
		}
	}
	return true
}

func (p *nodeRestriction) eviction(ctx context.Context, nodeName string, a *Attributes) error {
	if a.Operation != Create {
		return forbidden(a, fmt.Errorf("unexpected operation %s", a.Operation))
	}
	ev, ok := a.Object.(*policyv1.Eviction)
	if !ok {
		return forbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	name := a.Name
	if name == "" {
		if ev.Name == "" {
			return forbidden(a, fmt.Errorf("could not determine pod from request data"))
		}
		name = ev.Name
	}
	pod, err := p.existingPod(ctx, a, name)
	if err != nil {
		return err
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", nodeName))
	}
	return nil
}

func (p *nodeRestriction) pvcStatus(nodeName string, a *Attributes) error {
	if a.Operation != Update {
		return forbidden(a, fmt.Errorf("unexpected operation %q", a.Operation))
	}
	old, ok := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok {
		return forbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return forbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	strip := func(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
		c = c.DeepCopy()
		c.ResourceVersion, c.ManagedFields = "", nil
		c.Status.Capacity, c.Status.Conditions = nil, nil
		c.Status.AllocatedResourceStatuses, c.Status.AllocatedResources = nil, nil
		return c
	}
	if !equality.Semantic.DeepEqual(strip(old), strip(pvc)) {
		return forbidden(a, fmt.Errorf("node %q is not allowed to update fields other than status.quantity and status.conditions", nodeName))
	}
	return nil
}

func (p *nodeRestriction) node(nodeName string, a *Attributes) error {
	if a.Name != nodeName {
		return forbidden(a, fmt.Errorf("node %q is not allowed to modify node %q", nodeName, a.Name))
	}
	switch a.Operation {
	case Create:
		n, ok := a.Object.(*corev1.Node)
		if !ok {
			return forbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		if n.Spec.ConfigSource != nil {
			return forbidden(a, fmt.Errorf("node %q is not allowed to create pods with a non-nil configSource", nodeName))
		}
		if bad := forbiddenNodeLabels(n.Labels, nil); len(bad) > 0 {
			return forbidden(a, fmt.Errorf("node %q is not allowed to set the following labels: %s", nodeName, strings.Join(bad, ", ")))
		}
	case Update:
		n, ok := a.Object.(*corev1.Node)
		if !ok {
			return forbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		old, ok := a.OldObject.(*corev1.Node)
		if !ok {
			return forbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		if n.Spec.ConfigSource != nil && !equality.Semantic.DeepEqual(n.Spec.ConfigSource, old.Spec.ConfigSource) {
			return forbidden(a, fmt.Errorf("node %q is not allowed to update configSource to a new non-nil configSource", nodeName))
		}
		if !equality.Semantic.DeepEqual(n.Spec.Taints, old.Spec.Taints) {
			return forbidden(a, fmt.Errorf("node %q is not allowed to modify taints", nodeName))
		}
		if !equality.Semantic.DeepEqual(n.OwnerReferences, old.OwnerReferences) {
			return forbidden(a, fmt.Errorf("node %q is not allowed to modify ownerReferences", nodeName))
		}
		if bad := forbiddenNodeLabels(n.Labels, old.Labels); len(bad) > 0 {
			return forbidden(a, fmt.Errorf("is not allowed to modify labels: %s", strings.Join(bad, ", ")))
		}
	}
	return nil
}

// forbiddenNodeLabels are the labels changed between old and new (sorted)
// a kubelet may not set: those under node-restriction.kubernetes.io/ and
// the kubernetes.io / k8s.io ones outside the kubelet's own set.
func forbiddenNodeLabels(labels, old map[string]string) []string {
	var out []string
	check := func(k string) {
		ns := labelNamespace(k)
		if ns == corev1.LabelNamespaceNodeRestriction || strings.HasSuffix(ns, "."+corev1.LabelNamespaceNodeRestriction) ||
			(isKubernetesLabelNamespace(ns) && !isKubeletLabel(k, ns)) {
			out = append(out, k)
		}
	}
	for k, v := range labels {
		if w, ok := old[k]; !ok || v != w {
			check(k)
		}
	}
	for k := range old {
		if _, ok := labels[k]; !ok {
			check(k)
		}
	}
	sort.Strings(out)
	return out
}

func labelNamespace(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return ""
}

func isKubernetesLabelNamespace(ns string) bool {
	return ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
}

// kubeletLabels are the kubernetes.io labels a kubelet sets on its Node
// (upstream's k8s.io/kubelet well-known labels).
var kubeletLabels = map[string]bool{
	corev1.LabelHostname: true, corev1.LabelTopologyZone: true, corev1.LabelTopologyRegion: true,
	corev1.LabelFailureDomainBetaZone: true, corev1.LabelFailureDomainBetaRegion: true,
	corev1.LabelInstanceType: true, corev1.LabelInstanceTypeStable: true,
	corev1.LabelOSStable: true, corev1.LabelArchStable: true,
	"beta.kubernetes.io/os": true, "beta.kubernetes.io/arch": true,
}

func isKubeletLabel(key, ns string) bool {
	if kubeletLabels[key] {
		return true
	}
	for _, allowed := range []string{corev1.LabelNamespaceSuffixKubelet, corev1.LabelNamespaceSuffixNode} {
		if ns == allowed || strings.HasSuffix(ns, "."+allowed) {
			return true
		}
	}
	return false
}

func (p *nodeRestriction) serviceAccountToken(ctx context.Context, nodeName string, a *Attributes) error {
	if a.Operation != Create || a.Subresource != "token" {
		return nil
	}
	tr, ok := a.Object.(*authenticationv1.TokenRequest)
	if !ok {
		return forbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return forbidden(a, fmt.Errorf("node requested token not bound to a pod"))
	}
	if ref.UID == "" {
		return forbidden(a, fmt.Errorf("node requested token with a pod binding without a uid"))
	}
	pod, err := p.existingPod(ctx, a, ref.Name)
	if err != nil {
		return err
	}
	if ref.UID != pod.UID {
		return forbidden(a, fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, fmt.Errorf("node requested token bound to a pod scheduled on a different node"))
	}
	return nil
}

func (p *nodeRestriction) lease(nodeName string, a *Attributes) error {
	if a.Namespace != node.NamespaceNodeLease {
		return forbidden(a, fmt.Errorf("can only access leases in the %q system namespace", node.NamespaceNodeLease))
	}
	name := a.Name
	if a.Operation == Create {
		l, ok := a.Object.(*coordinationv1.Lease)
		if !ok {
			return forbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		name = l.Name
	}
	if name != nodeName {
		return forbidden(a, fmt.Errorf("can only access node lease with the same name as the requesting node"))
	}
	return nil
}
