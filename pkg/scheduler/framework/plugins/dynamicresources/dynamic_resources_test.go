package dynamicresources

import (
	"context"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func lister[T runtime.Object](objs ...T) cache.Lister[T] {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = idx.Add(o)
	}
	return cache.NewLister[T](idx, schema.GroupResource{})
}

const ns = "default"

var (
	podUID = types.UID("pod-uid")

	workerSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"worker"}}}}}}

	pending   = claim("my-pod-claim", nil)
	allocated = claim("my-pod-claim", &resourcev1.AllocationResult{NodeSelector: workerSelector})
	anywhere  = claim("my-pod-claim", &resourcev1.AllocationResult{})
	inUse     = func() *resourcev1.ResourceClaim {
		c := claim("my-pod-claim", &resourcev1.AllocationResult{})
		for i := 0; i < reservedForMaxSize; i++ {
			c.Status.ReservedFor = append(c.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: "other", UID: types.UID("other-" + string(rune('a'+i%26)) + string(rune('0'+i/26)))})
		}
		return c
	}()
	deleting = func() *resourcev1.ResourceClaim {
		c := claim("my-pod-claim", nil)
		c.DeletionTimestamp = &metav1.Time{}
		return c
	}()
)

func claim(name string, alloc *resourcev1.AllocationResult) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(name + "-uid")},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "req-1", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "my-resource-class"}}}}}}
	c.Status.Allocation = alloc
	return c
}

func podWithClaimName() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "my-pod", Namespace: ns, UID: podUID},
		Spec: corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{{Name: "my-resource", ResourceClaimName: ptr.To("my-pod-claim")}}}}
}

func podWithTemplate(status *string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "my-pod", Namespace: ns, UID: podUID},
		Spec: corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{{Name: "my-resource", ResourceClaimTemplateName: ptr.To("tmpl")}}}}
	if status != nil {
		p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "my-resource", ResourceClaimName: status}}
	}
	return p
}

func node(name string) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}})
	return ni
}

// Cases in the shape of upstream's TestPlugin (those that need no
// allocation).
func TestPlugin(t *testing.T) {
	unresolvable := func(msg string) *framework.Status {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, msg)
	}
	generated := claim("my-pod-my-resource", &resourcev1.AllocationResult{})
	generated.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "my-pod", UID: podUID, Controller: ptr.To(true)}}
	for _, tt := range []struct {
		name       string
		pod        *corev1.Pod
		claims     []*resourcev1.ResourceClaim
		classes    []*resourcev1.DeviceClass
		preEnqueue *framework.Status
		preFilter  *framework.Status
		filter     map[string]*framework.Status // node → status
	}{
		{name: "empty", pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: ns}}, preFilter: framework.NewStatus(framework.Skip)},
		{name: "claim does not exist", pod: podWithClaimName(),
			preEnqueue: unresolvable(`resourceclaim.resource.k8s.io "my-pod-claim" not found`), preFilter: unresolvable(`resourceclaim.resource.k8s.io "my-pod-claim" not found`)},
		{name: "template claim not created yet", pod: podWithTemplate(nil),
			preEnqueue: unresolvable("pod \"default/my-pod\": ResourceClaim not created yet"), preFilter: unresolvable("pod \"default/my-pod\": ResourceClaim not created yet")},
		{name: "template produced no claim", pod: func() *corev1.Pod {
			p := podWithTemplate(nil)
			p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "my-resource"}}
			return p
		}(), preFilter: framework.NewStatus(framework.Skip)},
		{name: "generated claim owned by the pod", pod: podWithTemplate(ptr.To("my-pod-my-resource")), claims: []*resourcev1.ResourceClaim{generated},
			filter: map[string]*framework.Status{"worker": nil}},
		{name: "generated claim not owned by the pod", pod: podWithTemplate(ptr.To("my-pod-claim")), claims: []*resourcev1.ResourceClaim{anywhere},
			preEnqueue: unresolvable("ResourceClaim default/my-pod-claim was not created for pod default/my-pod (pod is not owner)"),
			preFilter:  unresolvable("ResourceClaim default/my-pod-claim was not created for pod default/my-pod (pod is not owner)")},
		{name: "claim being deleted", pod: podWithClaimName(), claims: []*resourcev1.ResourceClaim{deleting},
			preEnqueue: unresolvable(`resourceclaim "my-pod-claim" is being deleted`), preFilter: unresolvable(`resourceclaim "my-pod-claim" is being deleted`)},
		{name: "allocated, good and wrong topology", pod: podWithClaimName(), claims: []*resourcev1.ResourceClaim{allocated},
			filter: map[string]*framework.Status{"worker": nil, "worker-2": unresolvable(ErrReasonNotAvailable)}},
		{name: "allocated without node selector", pod: podWithClaimName(), claims: []*resourcev1.ResourceClaim{anywhere},
			filter: map[string]*framework.Status{"worker": nil, "worker-2": nil}},
		{name: "in use by others", pod: podWithClaimName(), claims: []*resourcev1.ResourceClaim{inUse}, preFilter: unresolvable(ErrReasonInUse)},
		{name: "not allocated, class missing", pod: podWithClaimName(), claims: []*resourcev1.ResourceClaim{pending},
			preFilter: unresolvable("request req-1: device class my-resource-class does not exist")},
		{name: "not allocated: skiff cannot allocate", pod: podWithClaimName(), claims: []*resourcev1.ResourceClaim{pending},
			classes:   []*resourcev1.DeviceClass{{ObjectMeta: metav1.ObjectMeta{Name: "my-resource-class"}}},
			preFilter: unresolvable(`resourceclaim "my-pod-claim" is not allocated and skiff cannot allocate devices yet`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl := &DynamicResources{claimLister: lister(tt.claims...), classLister: lister(tt.classes...)}
			ctx := context.Background()
			if got := pl.PreEnqueue(ctx, tt.pod); !got.Equal(tt.preEnqueue) {
				t.Errorf("PreEnqueue = %v, want %v", got, tt.preEnqueue)
			}
			state := framework.NewCycleState()
			_, got := pl.PreFilter(ctx, state, tt.pod, nil)
			if !got.Equal(tt.preFilter) {
				t.Fatalf("PreFilter = %v, want %v", got, tt.preFilter)
			}
			for n, want := range tt.filter {
				if got := pl.Filter(ctx, state, tt.pod, node(n)); !got.Equal(want) {
					t.Errorf("Filter(%s) = %v, want %v", n, got, want)
				}
			}
		})
	}
}

type fakeHandle struct {
	framework.Handle
	c *client.Client
}

func (h fakeHandle) Client() *client.Client { return h.c }
func (h fakeHandle) Logger() *slog.Logger   { return slog.New(slog.DiscardHandler) }

// PreBind adds the pod to the claim's reservedFor through the API;
// Unreserve takes it out again; an already reserved claim is left alone.
func TestPreBindReserves(t *testing.T) {
	env := testenv.StartT(t)
	c, err := client.New(&client.Config{Host: env.URL, CAData: env.CAData, CertData: env.CertData, KeyData: env.KeyData, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	claims := client.For[*resourcev1.ResourceClaim, *resourcev1.ResourceClaimList](c).Namespace(ns)
	created, err := claims.Create(ctx, claim("my-pod-claim", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{Request: "req-1", Driver: "driver.example.com", Pool: "worker", Device: "dev-1"}}}}
	if created, err = claims.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pl := &DynamicResources{claimLister: lister(created), classLister: lister[*resourcev1.DeviceClass](), client: fakeHandle{c: c}.Client}
	pod := podWithClaimName()
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter = %v", st)
	}
	if st := pl.Reserve(ctx, state, pod, "worker"); !st.IsSuccess() {
		t.Fatalf("Reserve = %v", st)
	}
	if st := pl.PreBind(ctx, state, pod, "worker"); !st.IsSuccess() {
		t.Fatalf("PreBind = %v", st)
	}
	got, err := claims.Get(ctx, "my-pod-claim", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "my-pod", UID: podUID}}
	if len(got.Status.ReservedFor) != 1 || got.Status.ReservedFor[0] != want[0] {
		t.Fatalf("reservedFor = %+v, want %+v", got.Status.ReservedFor, want)
	}
	pl.Unreserve(ctx, state, pod, "worker")
	if got, _ = claims.Get(ctx, "my-pod-claim", metav1.GetOptions{}); len(got.Status.ReservedFor) != 0 {
		t.Errorf("reservedFor after Unreserve = %+v, want empty", got.Status.ReservedFor)
	}
}

// A pod without claims (PreFilter skipped, no state) passes PreBind: every
// pod of the default profile goes through it.
func TestPreBindWithoutClaims(t *testing.T) {
	pl := &DynamicResources{claimLister: lister[*resourcev1.ResourceClaim](), classLister: lister[*resourcev1.DeviceClass]()}
	pod := &corev1.Pod{}
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), state, pod, nil); !st.IsSkip() {
		t.Fatalf("PreFilter = %v, want Skip", st)
	}
	if st := pl.PreBind(context.Background(), state, pod, "worker"); !st.IsSuccess() {
		t.Errorf("PreBind = %v, want Success", st)
	}
}

func TestHints(t *testing.T) {
	pod := podWithClaimName()
	pl := &DynamicResources{claimLister: lister(anywhere), classLister: lister[*resourcev1.DeviceClass]()}
	changed := anywhere.DeepCopy()
	changed.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "x", UID: "x"}}
	other := claim("other", &resourcev1.AllocationResult{})
	deallocated := other.DeepCopy()
	deallocated.Status.Allocation = nil
	for _, tt := range []struct {
		name     string
		old, new any
		want     framework.QueueingHint
	}{
		{"own claim created", nil, anywhere, framework.Queue},
		{"own claim status changed", anywhere, changed, framework.Queue},
		{"own claim unchanged status", anywhere, anywhere.DeepCopy(), framework.QueueSkip},
		{"other claim created", nil, other, framework.QueueSkip},
		{"other claim deallocated", other, deallocated, framework.Queue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterClaimChange(nil, pod, tt.old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	waiting := podWithTemplate(nil)
	ready := podWithTemplate(ptr.To("my-pod-claim"))
	ready.Spec.ResourceClaims[0] = corev1.PodResourceClaim{Name: "my-resource", ResourceClaimName: ptr.To("my-pod-claim")}
	if got, _ := pl.isSchedulableAfterPodChange(nil, waiting, waiting, ready); got != framework.Queue {
		t.Errorf("pod change naming its claim: %v, want Queue", got)
	}
	if got, _ := pl.isSchedulableAfterPodChange(nil, waiting, waiting, waiting); got != framework.QueueSkip {
		t.Errorf("pod change still waiting: %v, want QueueSkip", got)
	}
}

// A pod without claims goes through Reserve, PreBind and Unreserve
// (which run for every pod) without errors after PreFilter's Skip.
func TestPodWithoutClaimsPassesBinding(t *testing.T) {
	pl := &DynamicResources{claimLister: lister[*resourcev1.ResourceClaim](), classLister: lister[*resourcev1.DeviceClass]()}
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "foo", Namespace: ns}}
	state := framework.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, nil); !st.IsSkip() {
		t.Fatalf("PreFilter = %v, want Skip", st)
	}
	if st := pl.Reserve(ctx, state, pod, "n"); !st.IsSuccess() {
		t.Errorf("Reserve = %v", st)
	}
	if st := pl.PreBind(ctx, state, pod, "n"); !st.IsSuccess() {
		t.Errorf("PreBind = %v", st)
	}
	pl.Unreserve(ctx, state, pod, "n")
}
