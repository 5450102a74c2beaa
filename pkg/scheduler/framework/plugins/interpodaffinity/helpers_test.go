package interpodaffinity

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	schedcache "github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

// fakeHandle is the part of framework.Handle the plugin uses.
type fakeHandle struct {
	framework.Handle
	lister framework.SharedLister
}

func (h *fakeHandle) SnapshotSharedLister() framework.SharedLister { return h.lister }
func (h *fakeHandle) Parallelizer() framework.Parallelizer         { return framework.NewParallelizer(4) }
func (h *fakeHandle) SharedInformerFactory() *informers.SharedInformerFactory {
	return nil
}

var (
	nsLabelT1 = map[string]string{"team": "team1"}
	nsLabelT2 = map[string]string{"team": "team2"}
	// namespaces are upstream's test namespaces.
	namespaces = []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "subteam1.team1", Labels: nsLabelT1}},
		{ObjectMeta: metav1.ObjectMeta{Name: "subteam2.team1", Labels: nsLabelT1}},
		{ObjectMeta: metav1.ObjectMeta{Name: "subteam1.team2", Labels: nsLabelT2}},
		{ObjectMeta: metav1.ObjectMeta{Name: "subteam2.team2", Labels: nsLabelT2}},
	}
)

// newPlugin builds the plugin over a snapshot of pods and nodes, with a
// namespace lister holding nss.
func newPlugin(t *testing.T, args *config.InterPodAffinityArgs, pods []*corev1.Pod, nodes []*corev1.Node, nss []*corev1.Namespace) (*InterPodAffinity, *schedcache.Snapshot) {
	t.Helper()
	snap := schedcache.NewSnapshot(pods, nodes)
	var obj *config.InterPodAffinityArgs
	if args != nil {
		obj = args
	}
	var p framework.Plugin
	var err error
	if obj == nil {
		p, err = New(context.Background(), nil, &fakeHandle{lister: snap})
	} else {
		p, err = New(context.Background(), obj, &fakeHandle{lister: snap})
	}
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*InterPodAffinity)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil)
	for _, ns := range nss {
		if err := idx.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	pl.nsLister = cache.NewLister[*corev1.Namespace](idx, schema.GroupResource{Resource: "namespaces"})
	return pl, snap
}

func mustNodeInfo(t *testing.T, snap *schedcache.Snapshot, name string) *framework.NodeInfo {
	t.Helper()
	ni, err := snap.NodeInfos().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return ni
}

// podBuilder builds test pods as upstream's st.MakePod.
type podBuilder struct{ p *corev1.Pod }

func mkPod() *podBuilder { return &podBuilder{p: &corev1.Pod{}} }

func (b *podBuilder) Obj() *corev1.Pod                { return b.p }
func (b *podBuilder) Name(n string) *podBuilder       { b.p.Name = n; return b }
func (b *podBuilder) UID(u string) *podBuilder        { b.p.UID = types.UID(u); return b }
func (b *podBuilder) Namespace(ns string) *podBuilder { b.p.Namespace = ns; return b }
func (b *podBuilder) Node(n string) *podBuilder       { b.p.Spec.NodeName = n; return b }
func (b *podBuilder) Label(k, v string) *podBuilder {
	if b.p.Labels == nil {
		b.p.Labels = map[string]string{}
	}
	b.p.Labels[k] = v
	return b
}
func (b *podBuilder) Labels(m map[string]string) *podBuilder {
	for k, v := range m {
		b.Label(k, v)
	}
	return b
}

type affinityKind int

const (
	required affinityKind = iota
	preferred
)

func (b *podBuilder) term(anti bool, kind affinityKind, topologyKey string, sel *metav1.LabelSelector) *podBuilder {
	if b.p.Spec.Affinity == nil {
		b.p.Spec.Affinity = &corev1.Affinity{}
	}
	t := corev1.PodAffinityTerm{LabelSelector: sel, TopologyKey: topologyKey}
	a := b.p.Spec.Affinity
	if anti {
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		if kind == required {
			a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
		} else {
			a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, corev1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: t})
		}
		return b
	}
	if a.PodAffinity == nil {
		a.PodAffinity = &corev1.PodAffinity{}
	}
	if kind == required {
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	} else {
		a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, corev1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: t})
	}
	return b
}

func expr(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func (b *podBuilder) PodAffinityIn(key, tk string, values []string, k affinityKind) *podBuilder {
	return b.term(false, k, tk, expr(key, metav1.LabelSelectorOpIn, values...))
}
func (b *podBuilder) PodAffinityNotIn(key, tk string, values []string, k affinityKind) *podBuilder {
	return b.term(false, k, tk, expr(key, metav1.LabelSelectorOpNotIn, values...))
}
func (b *podBuilder) PodAffinityExists(key, tk string, k affinityKind) *podBuilder {
	return b.term(false, k, tk, expr(key, metav1.LabelSelectorOpExists))
}
func (b *podBuilder) PodAntiAffinityIn(key, tk string, values []string, k affinityKind) *podBuilder {
	return b.term(true, k, tk, expr(key, metav1.LabelSelectorOpIn, values...))
}
func (b *podBuilder) PodAntiAffinityNotIn(key, tk string, values []string, k affinityKind) *podBuilder {
	return b.term(true, k, tk, expr(key, metav1.LabelSelectorOpNotIn, values...))
}
func (b *podBuilder) PodAntiAffinityExists(key, tk string, k affinityKind) *podBuilder {
	return b.term(true, k, tk, expr(key, metav1.LabelSelectorOpExists))
}
func (b *podBuilder) PodAntiAffinity(tk string, sel *metav1.LabelSelector, k affinityKind) *podBuilder {
	return b.term(true, k, tk, sel)
}

func mkNode(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// createPodWithAffinityTerms is upstream's helper: required affinity and
// anti-affinity terms given as API terms.
func createPodWithAffinityTerms(namespace, nodeName string, labels map[string]string, affinity, antiAffinity []corev1.PodAffinityTerm) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Namespace: namespace},
		Spec: corev1.PodSpec{
			NodeName: nodeName,
			Affinity: &corev1.Affinity{
				PodAffinity:     &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: affinity},
				PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: antiAffinity},
			},
		},
	}
}
