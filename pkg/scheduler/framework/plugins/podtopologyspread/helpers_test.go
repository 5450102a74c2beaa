package podtopologyspread

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	schedcache "github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

// fakeHandle is the part of framework.Handle the plugin uses.
type fakeHandle struct {
	framework.Handle
	lister  framework.SharedLister
	factory *informers.SharedInformerFactory
}

func (h *fakeHandle) SnapshotSharedLister() framework.SharedLister { return h.lister }
func (h *fakeHandle) Parallelizer() framework.Parallelizer         { return framework.NewParallelizer(4) }
func (h *fakeHandle) SharedInformerFactory() *informers.SharedInformerFactory {
	return h.factory
}

// newPlugin builds the plugin over a snapshot of pods and nodes; objs
// (Services, ReplicationControllers, ReplicaSets, StatefulSets) are put in
// the informers' caches. nil args: the defaults (system defaulting).
func newPlugin(t *testing.T, args *config.PodTopologySpreadArgs, pods []*corev1.Pod, nodes []*corev1.Node, objs ...runtime.Object) (*PodTopologySpread, *schedcache.Snapshot) {
	t.Helper()
	snap := schedcache.NewSnapshot(pods, nodes)
	f := informers.NewSharedInformerFactory(nil, 0)
	var obj runtime.Object
	if args != nil {
		obj = args
	}
	p, err := New(context.Background(), obj, &fakeHandle{lister: snap, factory: f})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.Service:
			err = f.Services().Informer().GetIndexer().Add(o)
		case *corev1.ReplicationController:
			err = informers.InformerFor[*corev1.ReplicationController, *corev1.ReplicationControllerList](f).Informer().GetIndexer().Add(o)
		case *appsv1.ReplicaSet:
			err = f.ReplicaSets().Informer().GetIndexer().Add(o)
		case *appsv1.StatefulSet:
			err = f.StatefulSets().Informer().GetIndexer().Add(o)
		default:
			t.Fatalf("unexpected object %T", o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return p.(*PodTopologySpread), snap
}

// listArgs are args without default constraints.
var listArgs = &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting}

type podBuilder struct{ p *corev1.Pod }

// makePod is upstream's st.MakePod().Name(name) (namespace "default").
func makePod(name string) *podBuilder {
	return &podBuilder{p: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}}}
}

func (b *podBuilder) namespace(ns string) *podBuilder { b.p.Namespace = ns; return b }
func (b *podBuilder) node(n string) *podBuilder       { b.p.Spec.NodeName = n; return b }
func (b *podBuilder) terminating() *podBuilder {
	now := metav1.Now()
	b.p.DeletionTimestamp = &now
	return b
}
func (b *podBuilder) label(k, v string) *podBuilder {
	if b.p.Labels == nil {
		b.p.Labels = map[string]string{}
	}
	b.p.Labels[k] = v
	return b
}
func (b *podBuilder) nodeSelector(m map[string]string) *podBuilder {
	b.p.Spec.NodeSelector = m
	return b
}
func (b *podBuilder) nodeAffinityIn(key string, vals ...string) *podBuilder {
	b.p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: vals}}}}}}}
	return b
}
func (b *podBuilder) toleration(key string) *podBuilder {
	b.p.Spec.Tolerations = append(b.p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists})
	return b
}
func (b *podBuilder) owner(apiVersion, kind, name string) *podBuilder {
	yes := true
	b.p.OwnerReferences = append(b.p.OwnerReferences, metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(name), Controller: &yes})
	return b
}

type spreadOpts struct {
	minDomains         *int32
	nodeAffinityPolicy *corev1.NodeInclusionPolicy
	nodeTaintsPolicy   *corev1.NodeInclusionPolicy
	matchLabelKeys     []string
}

func (b *podBuilder) spread(maxSkew int32, key string, action corev1.UnsatisfiableConstraintAction, sel *metav1.LabelSelector, o ...spreadOpts) *podBuilder {
	c := corev1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: action, LabelSelector: sel}
	if len(o) > 0 {
		c.MinDomains, c.NodeAffinityPolicy, c.NodeTaintsPolicy, c.MatchLabelKeys = o[0].minDomains, o[0].nodeAffinityPolicy, o[0].nodeTaintsPolicy, o[0].matchLabelKeys
	}
	b.p.Spec.TopologySpreadConstraints = append(b.p.Spec.TopologySpreadConstraints, c)
	return b
}
func (b *podBuilder) obj() *corev1.Pod { return b.p }

func exists(key string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: metav1.LabelSelectorOpExists}}}
}

var (
	fooSelector = exists("foo")
	barSelector = exists("bar")
	honor       = corev1.NodeInclusionPolicyHonor
	ignore      = corev1.NodeInclusionPolicyIgnore
)

// makeNode: name and label key/value pairs.
func makeNode(name string, kv ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

func tainted(n *corev1.Node, key string) *corev1.Node {
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	return n
}

func ptrTo[T any](v T) *T { return &v }

var appsReplicaSet = appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
	Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
