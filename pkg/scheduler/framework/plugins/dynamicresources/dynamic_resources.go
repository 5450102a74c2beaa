package dynamicresources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	"github.com/skiff-sh/skiff/pkg/componenthelpers/scheduling/nodeaffinity"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/helper"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework/plugins/names"
)

const (
	// Name is the plugin's name in configurations.
	Name = names.DynamicResources
	// stateKey is where PreFilter leaves the pod's claims.
	stateKey framework.StateKey = Name

	// ErrReasonNotAvailable: an allocated claim is not usable on the node.
	ErrReasonNotAvailable = "resourceclaim not available on the node"
	// ErrReasonInUse: the claim is reserved for other consumers, fully.
	ErrReasonInUse = "resourceclaim in use"

	// reservedForMaxSize is upstream's ResourceClaimReservedForMaxSize.
	reservedForMaxSize = 256
)

// Errors of a pod resource claim's name, upstream's resourceclaim.Name.
var (
	// ErrClaimNotFound: a template claim of the pod was not generated yet.
	ErrClaimNotFound = errors.New("ResourceClaim not created yet")
	// ErrAPIUnsupported: neither a claim nor a template is named.
	ErrAPIUnsupported = errors.New("none of the supported fields are set")
)

var deviceClassResource = schema.GroupResource{Group: "resource.k8s.io", Resource: "deviceclass"}

// DynamicResources checks the pod's ResourceClaims.
type DynamicResources struct {
	claimLister cache.Lister[*resourcev1.ResourceClaim]
	classLister cache.Lister[*resourcev1.DeviceClass]
	client      func() *client.Client
}

var (
	_ framework.PreEnqueuePlugin  = &DynamicResources{}
	_ framework.PreFilterPlugin   = &DynamicResources{}
	_ framework.FilterPlugin      = &DynamicResources{}
	_ framework.PostFilterPlugin  = &DynamicResources{}
	_ framework.ReservePlugin     = &DynamicResources{}
	_ framework.PreBindPlugin     = &DynamicResources{}
	_ framework.EnqueueExtensions = &DynamicResources{}
)

// New returns the plugin; args is *config.DynamicResourcesArgs or nil
// (its FilterTimeout bounds upstream's allocator, which skiff does not
// have: it is accepted and unused).
func New(_ context.Context, args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	if args != nil {
		if _, ok := args.(*config.DynamicResourcesArgs); !ok {
			return nil, fmt.Errorf("got args of type %T, want *DynamicResourcesArgs", args)
		}
	}
	f, err := helper.InformerFactory(h, Name)
	if err != nil {
		return nil, err
	}
	return &DynamicResources{
		claimLister: informers.InformerFor[*resourcev1.ResourceClaim, *resourcev1.ResourceClaimList](f).Lister(),
		classLister: informers.InformerFor[*resourcev1.DeviceClass, *resourcev1.DeviceClassList](f).Lister(),
		client:      h.Client,
	}, nil
}

// Name returns the plugin's name.
func (*DynamicResources) Name() string { return Name }

// stateData: the pod's claims and, per claim, the nodes its allocation
// is available on (nil: all).
type stateData struct {
	claims           []*resourcev1.ResourceClaim
	availableOnNodes []*nodeaffinity.NodeSelector
	// reserved: the claims PreBind added the pod to (for Unreserve).
	reserved []string
}

// Clone returns s (Filter never changes it).
func (s *stateData) Clone() framework.StateData { return s }

// EventsToRegister: nodes (labels, allocatable), claims, the pod's own
// generated claims showing in its status, device classes and slices.
func (pl *DynamicResources) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel | framework.UpdateNodeAllocatable}},
		{Event: framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Add | framework.Update}, QueueingHintFn: pl.isSchedulableAfterClaimChange},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodGeneratedResourceClaim}, QueueingHintFn: pl.isSchedulableAfterPodChange},
		{Event: framework.ClusterEvent{Resource: framework.DeviceClass, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.ResourceSlice, ActionType: framework.Add | framework.Update}},
	}, nil
}

// PreEnqueue keeps a pod whose claims are not there (yet) out of the
// active queue.
func (pl *DynamicResources) PreEnqueue(_ context.Context, pod *corev1.Pod) *framework.Status {
	if err := pl.foreachPodResourceClaim(pod, nil); err != nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	return nil
}

// claimName is the name of the claim behind one pod resource claim, as
// upstream's resourceclaim.Name: nil when a template produced no claim;
// mustCheckOwner for generated claims.
func claimName(pod *corev1.Pod, pc *corev1.PodResourceClaim) (*string, bool, error) {
	switch {
	case pc.ResourceClaimName != nil:
		return pc.ResourceClaimName, false, nil
	case pc.ResourceClaimTemplateName != nil:
		for i := range pod.Status.ResourceClaimStatuses {
			if st := &pod.Status.ResourceClaimStatuses[i]; st.Name == pc.Name {
				return st.ResourceClaimName, true, nil
			}
		}
		return nil, false, fmt.Errorf(`pod "%s/%s": %w`, pod.Namespace, pod.Name, ErrClaimNotFound)
	default:
		return nil, false, fmt.Errorf(`pod "%s/%s", spec.resourceClaim %q: %w`, pod.Namespace, pod.Name, pc.Name, ErrAPIUnsupported)
	}
}

func (pl *DynamicResources) foreachPodResourceClaim(pod *corev1.Pod, cb func(*resourcev1.ResourceClaim)) error {
	for i := range pod.Spec.ResourceClaims {
		name, mustCheckOwner, err := claimName(pod, &pod.Spec.ResourceClaims[i])
		if err != nil {
			return err
		}
		if name == nil {
			continue // the template produced no claim: nothing needed
		}
		claim, err := helper.GetObject(pl.claimLister, helper.ResourceClaimResource, pod.Namespace, *name)
		if err != nil {
			return err
		}
		if claim.DeletionTimestamp != nil {
			return fmt.Errorf("resourceclaim %q is being deleted", claim.Name)
		}
		if mustCheckOwner && !metav1.IsControlledBy(claim, pod) {
			return fmt.Errorf("ResourceClaim %s/%s was not created for pod %s/%s (pod is not owner)", claim.Namespace, claim.Name, pod.Namespace, pod.Name)
		}
		if cb != nil {
			cb(claim)
		}
	}
	return nil
}

func isReservedForPod(pod *corev1.Pod, claim *resourcev1.ResourceClaim) bool {
	for _, r := range claim.Status.ReservedFor {
		if r.UID == pod.UID {
			return true
		}
	}
	return false
}

// PreFilter reads the pod's claims: Skip without any; allocated claims
// restrict the nodes; unallocated ones cannot be allocated by skiff.
func (pl *DynamicResources) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	// The state is written even when Filter is skipped: Reserve, PreBind
	// and Unreserve run for every pod and find nothing to do in it.
	s := &stateData{}
	state.Write(stateKey, s)
	if len(pod.Spec.ResourceClaims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	if err := pl.foreachPodResourceClaim(pod, func(c *resourcev1.ResourceClaim) { s.claims = append(s.claims, c) }); err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	if len(s.claims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	s.availableOnNodes = make([]*nodeaffinity.NodeSelector, len(s.claims))
	for i, claim := range s.claims {
		if claim.Status.Allocation != nil {
			if len(claim.Status.ReservedFor) >= reservedForMaxSize && !isReservedForPod(pod, claim) {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonInUse)
			}
			if claim.Status.Allocation.NodeSelector != nil {
				sel, err := nodeaffinity.NewNodeSelector(claim.Status.Allocation.NodeSelector)
				if err != nil {
					return nil, framework.AsStatus(err)
				}
				s.availableOnNodes[i] = sel
			}
			continue
		}
		for _, req := range claim.Spec.Devices.Requests {
			switch {
			case req.Exactly != nil:
				if st := pl.validateDeviceClass(req.Exactly.DeviceClassName, req.Name); st != nil {
					return nil, st
				}
			case len(req.FirstAvailable) > 0:
				for _, sub := range req.FirstAvailable {
					if st := pl.validateDeviceClass(sub.DeviceClassName, req.Name+"/"+sub.Name); st != nil {
						return nil, st
					}
				}
			default:
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", claim.Namespace, claim.Name, req.Name))
			}
		}
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
			fmt.Sprintf("resourceclaim %q is not allocated and skiff cannot allocate devices yet", claim.Name))
	}
	return nil, nil
}

func (pl *DynamicResources) validateDeviceClass(className, requestName string) *framework.Status {
	if className == "" {
		return framework.NewStatus(framework.Error, fmt.Sprintf("request %s: unsupported request type", requestName))
	}
	if _, err := helper.GetObject(pl.classLister, deviceClassResource, "", className); err != nil {
		if apierrors.IsNotFound(err) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("request %s: device class %s does not exist", requestName, className))
		}
		return framework.AsStatus(err)
	}
	return nil
}

// PreFilterExtensions: none.
func (*DynamicResources) PreFilterExtensions() framework.PreFilterExtensions { return nil }

func getStateData(state *framework.CycleState) (*stateData, error) {
	c, err := state.Read(stateKey)
	if err != nil {
		return nil, err
	}
	s, ok := c.(*stateData)
	if !ok {
		return nil, fmt.Errorf("unexpected object in state: %T", c)
	}
	return s, nil
}

// Filter rejects a node an allocated claim is not available on.
func (*DynamicResources) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := getStateData(state)
	if err != nil {
		return framework.AsStatus(err)
	}
	node := nodeInfo.Node()
	for _, sel := range s.availableOnNodes {
		if sel != nil && !sel.Match(node) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotAvailable)
		}
	}
	return nil
}

// PostFilter runs when no node fits: upstream deallocates an allocated,
// unreserved claim there so that the scheduler can allocate it again
// elsewhere; skiff cannot allocate, so it never deallocates, and answers
// with upstream's messages (they show in the pod's FailedScheduling
// message before preemption's): "no new claims to deallocate" for pods
// without claims, "still not schedulable" otherwise, and the state's
// "not found" error when PreFilter did not run for the pod (another
// PreFilter rejected it first) — an Error, which, as upstream's, ends
// PostFilter (no preemption is tried).
func (*DynamicResources) PostFilter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, _ framework.NodeToStatusReader) (*framework.PostFilterResult, *framework.Status) {
	s, err := getStateData(state)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(s.claims) == 0 {
		return nil, framework.NewStatus(framework.Unschedulable, "no new claims to deallocate")
	}
	return nil, framework.NewStatus(framework.Unschedulable, "still not schedulable")
}

// Reserve: the claims are allocated already, nothing to assume.
func (*DynamicResources) Reserve(context.Context, *framework.CycleState, *corev1.Pod, string) *framework.Status {
	return nil
}

// Unreserve takes the pod out of the reservedFor of the claims PreBind
// added it to.
func (pl *DynamicResources) Unreserve(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, _ string) {
	s, err := getStateData(state)
	if err != nil || len(s.reserved) == 0 {
		return
	}
	for _, name := range s.reserved {
		_ = pl.updateClaimStatus(ctx, pod.Namespace, name, func(c *resourcev1.ResourceClaim) (bool, error) {
			var kept []resourcev1.ResourceClaimConsumerReference
			for _, r := range c.Status.ReservedFor {
				if r.UID != pod.UID {
					kept = append(kept, r)
				}
			}
			if len(kept) == len(c.Status.ReservedFor) {
				return false, nil
			}
			c.Status.ReservedFor = kept
			return true, nil
		})
	}
	s.reserved = nil
}

// PreBind reserves every claim for the pod (status.reservedFor), so that
// the claim's devices are not taken away while the pod uses them.
func (pl *DynamicResources) PreBind(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, _ string) *framework.Status {
	s, err := getStateData(state)
	if errors.Is(err, framework.ErrNotFound) {
		// PreFilter skipped the pod (no claims): nothing to reserve, as
		// upstream's PreBindPreFlight skipping it.
		return nil
	}
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.claims) == 0 {
		return nil
	}
	for _, claim := range s.claims {
		if isReservedForPod(pod, claim) {
			continue
		}
		added := false
		err := pl.updateClaimStatus(ctx, claim.Namespace, claim.Name, func(c *resourcev1.ResourceClaim) (bool, error) {
			if isReservedForPod(pod, c) {
				return false, nil
			}
			if c.Status.Allocation == nil {
				return false, errors.New("the claim got deallocated")
			}
			if len(c.Status.ReservedFor) >= reservedForMaxSize {
				return false, errors.New(ErrReasonInUse)
			}
			c.Status.ReservedFor = append(c.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID})
			added = true
			return true, nil
		})
		if err != nil {
			return framework.AsStatus(fmt.Errorf("add pod %q as consumer to claim %s/%s: %w", pod.Name, claim.Namespace, claim.Name, err))
		}
		if added {
			s.reserved = append(s.reserved, claim.Name)
		}
	}
	return nil
}

// updateClaimStatus reads the claim from the API, lets change edit it
// (false: nothing to write; an error stops) and writes its status,
// retrying conflicts.
func (pl *DynamicResources) updateClaimStatus(ctx context.Context, namespace, name string, change func(*resourcev1.ResourceClaim) (bool, error)) error {
	claims := client.For[*resourcev1.ResourceClaim, *resourcev1.ResourceClaimList](pl.client()).Namespace(namespace)
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var c *resourcev1.ResourceClaim
		if c, err = claims.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		write, cerr := change(c)
		if cerr != nil || !write {
			return cerr
		}
		if _, err = claims.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err == nil || !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// isSchedulableAfterClaimChange queues the pod when one of its claims
// was created or its status changed, or any claim got deallocated.
func (pl *DynamicResources) isSchedulableAfterClaimChange(_ *slog.Logger, pod *corev1.Pod, oldObj, newObj any) (framework.QueueingHint, error) {
	oldClaim, newClaim, err := helper.As[*resourcev1.ResourceClaim](oldObj, newObj)
	if err != nil {
		return framework.Queue, fmt.Errorf("unexpected object in isSchedulableAfterClaimChange: %w", err)
	}
	if newClaim == nil {
		return framework.QueueSkip, nil
	}
	uses := false
	if err := pl.foreachPodResourceClaim(pod, func(c *resourcev1.ResourceClaim) {
		if c.UID == newClaim.UID {
			uses = true
		}
	}); err != nil {
		return framework.QueueSkip, nil // still not schedulable
	}
	if oldClaim != nil && oldClaim.Status.Allocation != nil && newClaim.Status.Allocation == nil {
		return framework.Queue, nil
	}
	if !uses {
		return framework.QueueSkip, nil
	}
	if oldClaim == nil {
		return framework.Queue, nil
	}
	if apiequality.Semantic.DeepEqual(&oldClaim.Status, &newClaim.Status) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// isSchedulableAfterPodChange queues the pod when its own status now
// names all its generated claims.
func (pl *DynamicResources) isSchedulableAfterPodChange(_ *slog.Logger, pod *corev1.Pod, _, newObj any) (framework.QueueingHint, error) {
	_, modified, err := helper.As[*corev1.Pod](nil, newObj)
	if err != nil {
		return framework.Queue, fmt.Errorf("unexpected object in isSchedulableAfterPodChange: %w", err)
	}
	if modified == nil || modified.UID != pod.UID {
		return framework.QueueSkip, nil
	}
	if err := pl.foreachPodResourceClaim(modified, nil); err != nil {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}
