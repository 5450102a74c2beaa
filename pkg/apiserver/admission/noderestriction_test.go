package admission

import (
	"context"
	"errors"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// objGetter serves objects by resource, namespace and name.
type objGetter map[string]runtime.Object

func (g objGetter) Get(_ context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error) {
	if o, ok := g[gr.String()+"/"+ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gr, name)
}

func (g objGetter) GetConsistent(ctx context.Context, gr schema.GroupResource, ns, name string) (runtime.Object, error) {
	return g.Get(ctx, gr, ns, name)
}

func (g objGetter) List(context.Context, schema.GroupResource, string) ([]runtime.Object, error) {
	return nil, errors.New("not implemented")
}

func (g objGetter) ListConsistent(context.Context, schema.GroupResource, string) ([]runtime.Object, error) {
	return nil, errors.New("not implemented")
}

func TestNodeRestriction(t *testing.T) {
	boolp := func(b bool) *bool { return &b }
	boundPod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name[:2]), Labels: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{NodeName: node}}
	}
	n1Node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}
	g := objGetter{
		"pods/ns/mine":   boundPod("mine", "n1"),
		"pods/ns/theirs": boundPod("theirs", "n2"),
		"nodes//n1":      n1Node,
	}
	p := &nodeRestriction{d: Deps{Getter: g}}
	n1 := &authenticationv1.UserInfo{Username: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}
	mirror := func(mut ...func(*corev1.Pod)) *corev1.Pod {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "static-n1",
			Annotations:     map[string]string{mirrorPodAnnotation: "x"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "n1", UID: "node-uid", Controller: boolp(true)}}},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		for _, m := range mut {
			m(pod)
		}
		return pod
	}
	node := func(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	withStatus := func(pod *corev1.Pod, mut func(*corev1.Pod)) *corev1.Pod {
		pod = pod.DeepCopy()
		pod.Status.Phase = corev1.PodRunning
		if mut != nil {
			mut(pod)
		}
		return pod
	}
	grEvictionPods := grPods
	for _, tc := range []struct {
		name string
		a    *Attributes
		want string // "" admitted; else the Forbidden message's tail
	}{
		{"other user untouched", &Attributes{Operation: Update, Resource: grNodes, Name: "n2", Object: node("n2", nil), OldObject: node("n2", nil),
			UserInfo: &authenticationv1.UserInfo{Username: "alice"}}, ""},
		{"unknown node", &Attributes{Operation: Update, Resource: grNodes, Name: "n2",
			UserInfo: &authenticationv1.UserInfo{Username: "system:node:", Groups: []string{"system:nodes"}}}, `could not determine node from user "system:node:"`},
		{"own node", &Attributes{Operation: Update, Resource: grNodes, Name: "n1", Object: node("n1", map[string]string{"x": "1"}), OldObject: node("n1", nil)}, ""},
		{"own node status", &Attributes{Operation: Update, Resource: grNodes, Subresource: "status", Name: "n1", Object: node("n1", nil), OldObject: node("n1", nil)}, ""},
		{"other node", &Attributes{Operation: Update, Resource: grNodes, Name: "n2", Object: node("n2", nil), OldObject: node("n2", nil)}, `node "n1" is not allowed to modify node "n2"`},
		{"create other node", &Attributes{Operation: Create, Resource: grNodes, Name: "n2", Object: node("n2", nil)}, `node "n1" is not allowed to modify node "n2"`},
		{"create with kubelet labels", &Attributes{Operation: Create, Resource: grNodes, Name: "n1", Object: node("n1", map[string]string{
			"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "z", "kubelet.kubernetes.io/x": "y", "node.kubernetes.io/instance-type": "m", "example.com/x": "y"})}, ""},
		{"create with restricted labels", &Attributes{Operation: Create, Resource: grNodes, Name: "n1", Object: node("n1", map[string]string{
			"node-restriction.kubernetes.io/a": "b", "node-role.kubernetes.io/control-plane": "", "kubernetes.io/hostname": "n1"})},
			`node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/a, node-role.kubernetes.io/control-plane`},
		{"update restricted label", &Attributes{Operation: Update, Resource: grNodes, Name: "n1",
			Object: node("n1", nil), OldObject: node("n1", map[string]string{"foo.node-restriction.kubernetes.io/a": "b"})},
			`is not allowed to modify labels: foo.node-restriction.kubernetes.io/a`},
		{"taints", &Attributes{Operation: Update, Resource: grNodes, Name: "n1", Object: node("n1", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}), OldObject: node("n1", nil)},
			`node "n1" is not allowed to modify taints`},
		{"mirror pod", &Attributes{Operation: Create, Resource: grPods, Namespace: "ns", Object: mirror()}, ""},
		{"not a mirror pod", &Attributes{Operation: Create, Resource: grPods, Namespace: "ns", Object: mirror(func(p *corev1.Pod) { p.Annotations = nil })},
			`pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`},
		{"mirror pod on another node", &Attributes{Operation: Create, Resource: grPods, Namespace: "ns", Object: mirror(func(p *corev1.Pod) { p.Spec.NodeName = "n2" })},
			`node "n1" can only create pods with spec.nodeName set to itself`},
		{"mirror pod without owner", &Attributes{Operation: Create, Resource: grPods, Namespace: "ns", Object: mirror(func(p *corev1.Pod) { p.OwnerReferences = nil })},
			`node "n1" can only create pods with an owner reference set to itself`},
		{"mirror pod with wrong node uid", &Attributes{Operation: Create, Resource: grPods, Namespace: "ns", Object: mirror(func(p *corev1.Pod) { p.OwnerReferences[0].UID = "x" })},
			`node n1 UID mismatch: expected x got node-uid`},
		{"mirror pod with a secret", &Attributes{Operation: Create, Resource: grPods, Namespace: "ns", Object: mirror(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}
		})}, `node "n1" can not create pods that reference secrets`},
		{"mirror pod with a service account", &Attributes{Operation: Create, Resource: grPods, Namespace: "ns", Object: mirror(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "default" })},
			`node "n1" can not create pods that reference serviceaccounts`},
		{"mirror pod with a token projection", &Attributes{Operation: Create, Resource: grPods, Namespace: "ns", Object: mirror(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}}}
		})}, `node "n1" can not create pods that reference serviceaccounts (via projected volumes)`},
		{"update pod", &Attributes{Operation: Update, Resource: grPods, Namespace: "ns", Name: "mine", Object: boundPod("mine", "n1"), OldObject: boundPod("mine", "n1")},
			`unexpected operation "UPDATE", node "n1" can only create and delete mirror pods`},
		{"delete own pod", &Attributes{Operation: Delete, Resource: grPods, Namespace: "ns", Name: "mine"}, ""},
		{"delete other pod", &Attributes{Operation: Delete, Resource: grPods, Namespace: "ns", Name: "theirs"}, `node "n1" can only delete pods with spec.nodeName set to itself`},
		{"own pod status", &Attributes{Operation: Update, Resource: grPods, Subresource: "status", Namespace: "ns", Name: "mine",
			Object: withStatus(boundPod("mine", "n1"), nil), OldObject: boundPod("mine", "n1")}, ""},
		{"other pod status", &Attributes{Operation: Update, Resource: grPods, Subresource: "status", Namespace: "ns", Name: "theirs",
			Object: withStatus(boundPod("theirs", "n2"), nil), OldObject: boundPod("theirs", "n2")},
			`node "n1" can only update pod status for pods with spec.nodeName set to itself`},
		{"labels through status", &Attributes{Operation: Update, Resource: grPods, Subresource: "status", Namespace: "ns", Name: "mine",
			Object: withStatus(boundPod("mine", "n1"), func(p *corev1.Pod) { p.Labels["a"] = "c" }), OldObject: boundPod("mine", "n1")},
			`node "n1" cannot update labels through pod status`},
		{"evict own pod", &Attributes{Operation: Create, Resource: grEvictionPods, Subresource: "eviction", Namespace: "ns", Name: "mine", Object: &policyv1.Eviction{}}, ""},
		{"evict other pod", &Attributes{Operation: Create, Resource: grEvictionPods, Subresource: "eviction", Namespace: "ns", Name: "theirs", Object: &policyv1.Eviction{}},
			`node n1 can only evict pods with spec.nodeName set to itself`},
		{"pod binding", &Attributes{Operation: Create, Resource: grPods, Subresource: "binding", Namespace: "ns", Name: "mine"},
			`unexpected pod subresource "binding", only 'status' and 'eviction' are allowed`},
		{"own lease", &Attributes{Operation: Create, Resource: grLeases, Namespace: "kube-node-lease", Object: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}, ""},
		{"other lease", &Attributes{Operation: Create, Resource: grLeases, Namespace: "kube-node-lease", Object: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}},
			"can only access node lease with the same name as the requesting node"},
		{"update other lease", &Attributes{Operation: Update, Resource: grLeases, Namespace: "kube-node-lease", Name: "n2"}, "can only access node lease with the same name as the requesting node"},
		{"lease elsewhere", &Attributes{Operation: Update, Resource: grLeases, Namespace: "default", Name: "n1"}, `can only access leases in the "kube-node-lease" system namespace`},
		{"own csinode", &Attributes{Operation: Create, Resource: grCSINodes, Object: &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}, ""},
		{"other csinode", &Attributes{Operation: Update, Resource: grCSINodes, Name: "n2"}, "can only access CSINode with the same name as the requesting node"},
		{"pvc spec", &Attributes{Operation: Update, Resource: grPVCs, Namespace: "ns", Name: "c"}, "may only update PVC status"},
		{"token for own pod", &Attributes{Operation: Create, Resource: grServiceAccounts, Subresource: "token", Namespace: "ns", Name: "default",
			Object: &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "mine", UID: "uid-mi"}}}}, ""},
		{"token for other pod", &Attributes{Operation: Create, Resource: grServiceAccounts, Subresource: "token", Namespace: "ns", Name: "default",
			Object: &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "theirs", UID: "uid-th"}}}},
			"node requested token bound to a pod scheduled on a different node"},
		{"unbound token", &Attributes{Operation: Create, Resource: grServiceAccounts, Subresource: "token", Namespace: "ns", Name: "default",
			Object: &authenticationv1.TokenRequest{}}, "node requested token not bound to a pod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.a
			if a.UserInfo == nil {
				a.UserInfo = n1
			}
			err := p.Admit(context.Background(), a)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), ": "+tc.want) {
				t.Fatalf("got %v, want Forbidden ending %q", err, tc.want)
			}
		})
	}
}
