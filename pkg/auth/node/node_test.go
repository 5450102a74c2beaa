package node

import (
	"context"
	"strconv"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/auth/authorizer"
	"github.com/skiff-sh/skiff/pkg/auth/bootstrappolicy"
)

func newAuthz(g *Graph) *Authorizer {
	for _, r := range bootstrappolicy.ClusterRoles() {
		if r.Name == "system:node" {
			return New(g, r.Rules)
		}
	}
	panic("no system:node role")
}

func pod(ns, name, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("u-" + name)},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "default",
			Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func withSecretVolume(s string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "v-" + s,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: s}}})
	}
}

func user(name string, groups ...string) *authenticationv1.UserInfo {
	return &authenticationv1.UserInfo{Username: name, Groups: groups}
}

var n1 = user("system:node:n1", "system:nodes", "system:authenticated")

func res(u *authenticationv1.UserInfo, verb, group, resource, sub, ns, name string) authorizer.Attributes {
	return authorizer.Attributes{User: u, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub,
		Namespace: ns, Name: name, ResourceRequest: true}
}

func TestNodeIdentity(t *testing.T) {
	for _, tc := range []struct {
		u      *authenticationv1.UserInfo
		name   string
		isNode bool
	}{
		{n1, "n1", true},
		{user("system:node:n1"), "", false},
		{user("n1", "system:nodes"), "", false},
		{user("system:node:", "system:nodes"), "", true},
		{nil, "", false},
	} {
		name, isNode := NodeIdentity(tc.u)
		if name != tc.name || isNode != tc.isNode {
			t.Errorf("NodeIdentity(%v) = %q, %v; want %q, %v", tc.u, name, isNode, tc.name, tc.isNode)
		}
	}
}

func TestAuthorize(t *testing.T) {
	g := NewGraph()
	g.Set(pod("ns", "p1", "n1", withSecretVolume("s1"), func(p *corev1.Pod) {
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
		p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm1"}}}}
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "envsecret"}, Key: "k"}}}}
		p.Spec.Volumes = append(p.Spec.Volumes,
			corev1.Volume{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "projcm"}}}}}}},
			corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim1"}}})
	}))
	g.Set(pod("ns", "p2", "n2", withSecretVolume("s2")))
	g.Set(pod("ns", "pending", "", withSecretVolume("s3")))
	g.Set(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "ns", Name: "claim1"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h",
			NodePublishSecretRef: &corev1.SecretReference{Name: "csisecret", Namespace: "storage"}}}}})
	g.Set(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv2"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "ns", Name: "other"}}})
	g.Set(&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va1"}, Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1"}})
	z := newAuthz(g)
	const noRel = "no relationship found between node 'n1' and this object"
	for _, tc := range []struct {
		name   string
		a      authorizer.Attributes
		want   authorizer.Decision
		reason string
	}{
		{"not a node", res(user("alice", "system:authenticated"), "get", "", "secrets", "", "ns", "s1"), authorizer.DecisionNoOpinion, ""},
		{"unknown node", res(user("system:node:", "system:nodes"), "get", "", "secrets", "", "ns", "s1"), authorizer.DecisionNoOpinion, `unknown node for user "system:node:"`},
		{"own pod's secret volume", res(n1, "get", "", "secrets", "", "ns", "s1"), authorizer.DecisionAllow, ""},
		{"watch own pod's secret", res(n1, "watch", "", "secrets", "", "ns", "s1"), authorizer.DecisionAllow, ""},
		{"image pull secret", res(n1, "get", "", "secrets", "", "ns", "pull"), authorizer.DecisionAllow, ""},
		{"env secret", res(n1, "get", "", "secrets", "", "ns", "envsecret"), authorizer.DecisionAllow, ""},
		{"envFrom configmap", res(n1, "get", "", "configmaps", "", "ns", "cm1"), authorizer.DecisionAllow, ""},
		{"projected configmap", res(n1, "get", "", "configmaps", "", "ns", "projcm"), authorizer.DecisionAllow, ""},
		{"another node's secret", res(n1, "get", "", "secrets", "", "ns", "s2"), authorizer.DecisionNoOpinion, noRel},
		{"unscheduled pod's secret", res(n1, "get", "", "secrets", "", "ns", "s3"), authorizer.DecisionNoOpinion, noRel},
		{"same name other namespace", res(n1, "get", "", "secrets", "", "other", "s1"), authorizer.DecisionNoOpinion, noRel},
		{"list secrets", res(n1, "list", "", "secrets", "", "ns", ""), authorizer.DecisionNoOpinion, "No Object name found"},
		{"update secret", res(n1, "update", "", "secrets", "", "ns", "s1"), authorizer.DecisionNoOpinion, "can only read resources of this type"},
		{"cluster-wide secret", res(n1, "list", "", "secrets", "", "", ""), authorizer.DecisionNoOpinion, "can only read namespaced object of this type"},
		{"pvc", res(n1, "get", "", "persistentvolumeclaims", "", "ns", "claim1"), authorizer.DecisionAllow, ""},
		{"pvc list", res(n1, "list", "", "persistentvolumeclaims", "", "ns", ""), authorizer.DecisionNoOpinion, "can only get individual resources of this type"},
		{"pvc status", res(n1, "patch", "", "persistentvolumeclaims", "status", "ns", "claim1"), authorizer.DecisionAllow, ""},
		{"pv of own claim", res(n1, "get", "", "persistentvolumes", "", "", "pv1"), authorizer.DecisionAllow, ""},
		{"pv of another claim", res(n1, "get", "", "persistentvolumes", "", "", "pv2"), authorizer.DecisionNoOpinion, noRel},
		{"pv's secret", res(n1, "get", "", "secrets", "", "storage", "csisecret"), authorizer.DecisionAllow, ""},
		{"sa token", res(n1, "create", "", "serviceaccounts", "token", "ns", "default"), authorizer.DecisionAllow, ""},
		{"sa token other ns", res(n1, "create", "", "serviceaccounts", "token", "kube-system", "default"), authorizer.DecisionNoOpinion, noRel},
		{"sa get", res(n1, "get", "", "serviceaccounts", "", "ns", "default"), authorizer.DecisionAllow, ""},
		{"sa update", res(n1, "update", "", "serviceaccounts", "", "ns", "default"), authorizer.DecisionNoOpinion, "can only create tokens for individual service accounts"},
		{"volume attachment", res(n1, "get", "storage.k8s.io", "volumeattachments", "", "", "va1"), authorizer.DecisionAllow, ""},
		{"own lease", res(n1, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n1"), authorizer.DecisionAllow, ""},
		{"create lease", res(n1, "create", "coordination.k8s.io", "leases", "", "kube-node-lease", ""), authorizer.DecisionAllow, ""},
		{"other lease", res(n1, "update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n2"), authorizer.DecisionNoOpinion, "can only access node lease with the same name as the requesting node"},
		{"lease elsewhere", res(n1, "get", "coordination.k8s.io", "leases", "", "default", "n1"), authorizer.DecisionNoOpinion, `can only access leases in the "kube-node-lease" system namespace`},
		{"own csinode", res(n1, "update", "storage.k8s.io", "csinodes", "", "", "n1"), authorizer.DecisionAllow, ""},
		{"other csinode", res(n1, "get", "storage.k8s.io", "csinodes", "", "", "n2"), authorizer.DecisionNoOpinion, "can only access CSINode with the same name as the requesting node"},
		{"get own node", res(n1, "get", "", "nodes", "", "", "n1"), authorizer.DecisionAllow, ""},
		{"get other node", res(n1, "get", "", "nodes", "", "", "n2"), authorizer.DecisionNoOpinion, "node 'n1' cannot read 'n2', only its own Node object"},
		{"list nodes", res(n1, "list", "", "nodes", "", "", ""), authorizer.DecisionNoOpinion, "node 'n1' cannot read all nodes, only its own Node object"},
		{"update node status", res(n1, "update", "", "nodes", "status", "", "n1"), authorizer.DecisionAllow, ""},
		{"create node", res(n1, "create", "", "nodes", "", "", ""), authorizer.DecisionAllow, ""},
		{"delete node", res(n1, "delete", "", "nodes", "", "", "n1"), authorizer.DecisionNoOpinion, ""},
		{"get own pod", res(n1, "get", "", "pods", "", "ns", "p1"), authorizer.DecisionAllow, ""},
		{"get other pod", res(n1, "get", "", "pods", "", "ns", "p2"), authorizer.DecisionNoOpinion, noRel},
		{"list all pods", res(n1, "list", "", "pods", "", "", ""), authorizer.DecisionNoOpinion, "can only list/watch pods with spec.nodeName field selector"},
		{"pod status", res(n1, "patch", "", "pods", "status", "ns", "p2"), authorizer.DecisionAllow, ""},
		{"eviction", res(n1, "create", "", "pods", "eviction", "ns", "p1"), authorizer.DecisionAllow, ""},
		{"static rule: events", res(n1, "create", "", "events", "", "ns", ""), authorizer.DecisionAllow, ""},
		{"static rule: services", res(n1, "list", "", "services", "", "", ""), authorizer.DecisionAllow, ""},
		{"static rule: tokenreviews", res(n1, "create", "authentication.k8s.io", "tokenreviews", "", "", ""), authorizer.DecisionAllow, ""},
		{"not in static rules", res(n1, "list", "apps", "deployments", "", "ns", ""), authorizer.DecisionNoOpinion, ""},
		{"non-resource", authorizer.Attributes{User: n1, Verb: "get", Path: "/healthz"}, authorizer.DecisionNoOpinion, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := z.Authorize(context.Background(), tc.a)
			if err != nil || d != tc.want || reason != tc.reason {
				t.Errorf("Authorize = %v, %q, %v; want %v, %q", d, reason, err, tc.want, tc.reason)
			}
		})
	}
	t.Run("list pods on own node", func(t *testing.T) {
		a := res(n1, "watch", "", "pods", "", "", "")
		a.FieldSelector = "spec.nodeName=n1"
		if d, _, _ := z.Authorize(context.Background(), a); d != authorizer.DecisionAllow {
			t.Errorf("watch with own spec.nodeName: %v", d)
		}
		a.FieldSelector = "spec.nodeName=n2"
		if d, _, _ := z.Authorize(context.Background(), a); d != authorizer.DecisionNoOpinion {
			t.Errorf("watch with another spec.nodeName: %v", d)
		}
	})
}

// TestGraphFollowsChanges: pods moving, leaving and being replaced change
// what a node may read, and shared objects stay reachable while any pod
// of the node uses them.
func TestGraphFollowsChanges(t *testing.T) {
	g := NewGraph()
	z := newAuthz(g)
	can := func(node, secret string) bool {
		d, _, _ := z.Authorize(context.Background(), res(user("system:node:"+node, "system:nodes"), "get", "", "secrets", "", "ns", secret))
		return d == authorizer.DecisionAllow
	}
	step := func(desc string, want map[string]bool) {
		t.Helper()
		for k, w := range want {
			var node, secret string
			for i := range k {
				if k[i] == '/' {
					node, secret = k[:i], k[i+1:]
				}
			}
			if got := can(node, secret); got != w {
				t.Errorf("%s: node %s reading %s = %v, want %v", desc, node, secret, got, w)
			}
		}
	}
	step("empty", map[string]bool{"n1/s1": false})
	g.Set(pod("ns", "a", ""))
	g.Set(pod("ns", "a", "", withSecretVolume("s1")))
	step("unscheduled", map[string]bool{"n1/s1": false})
	g.Set(pod("ns", "a", "n1", withSecretVolume("s1")))
	step("bound", map[string]bool{"n1/s1": true, "n2/s1": false})
	g.Set(pod("ns", "b", "n1", withSecretVolume("s1")))
	p := pod("ns", "a", "n1", withSecretVolume("s1"))
	p.Status.Phase = corev1.PodRunning
	g.Set(p)
	step("status update, second pod", map[string]bool{"n1/s1": true})
	g.Delete(pod("ns", "a", "n1"))
	step("one of two deleted", map[string]bool{"n1/s1": true})
	g.Delete(pod("ns", "b", "n1"))
	step("both deleted", map[string]bool{"n1/s1": false})
	// a pod recreated under the same name with other volumes (new uid)
	g.Set(pod("ns", "c", "n1", withSecretVolume("s1")))
	q := pod("ns", "c", "n1", withSecretVolume("s2"))
	q.UID = "other"
	g.Set(q)
	step("replaced", map[string]bool{"n1/s1": false, "n1/s2": true})
	// an ephemeral container adding an env secret
	q = q.DeepCopy()
	q.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg", Image: "i",
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "dbgsecret"}}}}}}}
	g.Set(q)
	step("ephemeral container", map[string]bool{"n1/dbgsecret": true, "n1/s2": true})
	// a relist drops what is gone
	g.Replace(&corev1.Pod{}, []runtime.Object{pod("ns", "d", "n2", withSecretVolume("s1"))})
	step("relist", map[string]bool{"n1/s2": false, "n1/dbgsecret": false, "n2/s1": true})
}

func TestRulesFor(t *testing.T) {
	z := newAuthz(NewGraph())
	if _, _, inc, err := z.RulesFor(context.Background(), n1, "ns"); !inc || err == nil {
		t.Errorf("RulesFor(node) = incomplete %v, err %v; want incomplete with an error", inc, err)
	}
	if _, _, inc, err := z.RulesFor(context.Background(), user("alice"), "ns"); inc || err != nil {
		t.Errorf("RulesFor(alice) = %v, %v", inc, err)
	}
}

// TestGraphResourceClaims: a claim allocated to a pod (its status) is
// readable by the pod's node once the status names it, and not after the
// status drops it.
func TestGraphResourceClaims(t *testing.T) {
	g := NewGraph()
	z := newAuthz(g)
	get := res(n1, "get", "resource.k8s.io", "resourceclaims", "", "ns", "claim-x")
	decide := func() authorizer.Decision { d, _, _ := z.Authorize(context.Background(), get); return d }
	p := pod("ns", "a", "n1")
	g.Set(p)
	if d := decide(); d != authorizer.DecisionNoOpinion {
		t.Fatalf("before the status names the claim: %v", d)
	}
	name := "claim-x"
	p = p.DeepCopy()
	p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &name}}
	g.Set(p)
	if d := decide(); d != authorizer.DecisionAllow {
		t.Fatalf("after: %v", d)
	}
	p = p.DeepCopy()
	p.Status.ResourceClaimStatuses = nil
	g.Set(p)
	if d := decide(); d != authorizer.DecisionNoOpinion {
		t.Fatalf("after the status dropped it: %v", d)
	}
}

// BenchmarkAuthorize: a node's request decided by the graph and one by
// the static rules, with 10,000 pods on 1,000 nodes.
func BenchmarkAuthorize(b *testing.B) {
	g := NewGraph()
	for i := 0; i < 10000; i++ {
		g.Set(pod("ns", "p"+strconv.Itoa(i), "n"+strconv.Itoa(i%1000), withSecretVolume("s"+strconv.Itoa(i))))
	}
	z := newAuthz(g)
	n := user("system:node:n7", "system:nodes", "system:authenticated")
	secret := res(n, "get", "", "secrets", "", "ns", "s1007")
	event := res(n, "create", "", "events", "", "ns", "")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d, _, _ := z.Authorize(ctx, secret); d != authorizer.DecisionAllow {
			b.Fatal(d)
		}
		if d, _, _ := z.Authorize(ctx, event); d != authorizer.DecisionAllow {
			b.Fatal(d)
		}
	}
}
