package admission

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/quota"
)

var (
	grResourceQuotas = schema.GroupResource{Resource: "resourcequotas"}
	grServicesQ      = schema.GroupResource{Resource: "services"}
	grClaimsQ        = schema.GroupResource{Resource: "persistentvolumeclaims"}
	grNamespacesQ    = schema.GroupResource{Resource: "namespaces"}
)

// quotaRetries is how often a charge that lost a race with another quota
// write is checked again against the stored quota (upstream's 3).
const quotaRetries = 3

// resourceQuota is upstream's ResourceQuota plugin: an object created (or
// updated in a way that changes its usage) in a namespace with
// ResourceQuotas is charged to every quota that matches it; a charge past
// a quota's status.hard is refused ("exceeded quota: ..."), and a charge
// that fits is written to the quota's status.used before the object is
// stored, with optimistic concurrency, so that two requests cannot both
// take the last room. The quota controller recalculates usage later
// (deletions, and charges of requests that then failed).
//
// Charges in one namespace are batched, as upstream's: the requests that
// arrive while a batch is being checked and written form the next one,
// checked one after the other against the quotas as the previous left
// them, with one status write per changed quota; writes from elsewhere
// (the controller, a second API server) are detected by the
// resourceVersion precondition.
type resourceQuota struct {
	d      Deps
	mu     sync.Mutex
	queues map[string]*nsQueue
	// live: a namespace whose quotas the watch cache does not have yet
	// is looked up in storage (upstream's live lookup).
	live liveLookup
}

func newResourceQuota(d Deps) *resourceQuota {
	return &resourceQuota{d: d, queues: map[string]*nsQueue{}}
}

func (*resourceQuota) Name() string              { return "ResourceQuota" }
func (*resourceQuota) Handles(op Operation) bool { return op == Create || op == Update }

// quotaHandles is each evaluator's Handles: which operations can change
// what an object counts.
func quotaHandles(a *Attributes) bool {
	switch a.Resource {
	case grPods:
		switch a.Subresource {
		case "":
			if a.Operation == Update {
				np, ok1 := a.Object.(*corev1.Pod)
				op, ok2 := a.OldObject.(*corev1.Pod)
				if ok1 && ok2 && isTerminatingPod(np) != isTerminatingPod(op) {
					return true
				}
			}
			return a.Operation == Create
		case "resize":
			return a.Operation == Update
		}
		return false
	case grServicesQ:
		return a.Subresource == "" && (a.Operation == Create || a.Operation == Update)
	case grClaimsQ:
		// A status write can change what a claim is charged
		// (status.allocatedResources): upstream's evaluator handles
		// every one (charged, never refused).
		return (a.Subresource == "" && (a.Operation == Create || a.Operation == Update)) ||
			(a.Subresource == "status" && a.Operation == Update)
	}
	return a.Subresource == "" && a.Operation == Create
}

func isTerminatingPod(p *corev1.Pod) bool {
	return p.Spec.ActiveDeadlineSeconds != nil && *p.Spec.ActiveDeadlineSeconds >= 0
}

// quotaWaiter is one request waiting for its namespace's batch.
type quotaWaiter struct {
	a       *Attributes
	ev      *quota.Evaluator
	decided bool
	result  error
	done    chan struct{}
}

// nsQueue holds the requests waiting in one namespace; running says a
// request is processing batches (the leader).
type nsQueue struct {
	pending []*quotaWaiter
	running bool
}

// quotaBatchTimeout bounds the processing of one batch (upstream waits
// 10 s for its quota evaluation).
const quotaBatchTimeout = 10 * time.Second

func (p *resourceQuota) Validate(ctx context.Context, a *Attributes) error {
	if a.Namespace == "" || (a.Resource == grNamespacesQ && a.Operation == Create) || !quotaHandles(a) {
		return nil
	}
	if a.Resource == grResourceQuotas && a.Operation == Create {
		// The namespace is about to have this quota: a live answer
		// without it (this very lookup's included) must not be reused.
		defer p.live.forget(a.Namespace)
	}
	objs, err := p.live.list(ctx, p.d, grResourceQuotas, a.Namespace)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return nil
	}
	// Queue the request; the first one in an idle namespace processes
	// batches until the queue is empty, as upstream's evaluator does
	// with its per-namespace work queue: one read of the quotas and one
	// status write per quota serve every request of a batch.
	w := &quotaWaiter{a: a, ev: quota.EvaluatorFor(a.Resource), done: make(chan struct{})}
	p.mu.Lock()
	q := p.queues[a.Namespace]
	if q == nil {
		q = &nsQueue{}
		p.queues[a.Namespace] = q
	}
	q.pending = append(q.pending, w)
	lead := !q.running
	q.running = true
	p.mu.Unlock()
	if lead {
		p.drain(ctx, a.Namespace, q)
	}
	select {
	case <-w.done:
		return w.result
	case <-ctx.Done():
		return apierrors.NewInternalError(fmt.Errorf("resource quota evaluation timed out"))
	}
}

// drain processes the namespace's batches until none is left.
func (p *resourceQuota) drain(ctx context.Context, ns string, q *nsQueue) {
	// The batch serves other requests too: the leader's cancellation
	// must not fail them.
	ctx = context.WithoutCancel(ctx)
	for {
		p.mu.Lock()
		batch := q.pending
		q.pending = nil
		if len(batch) == 0 {
			q.running = false
			delete(p.queues, ns)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		bctx, cancel := context.WithTimeout(ctx, quotaBatchTimeout)
		p.processBatch(bctx, ns, batch)
		cancel()
		for _, w := range batch {
			close(w.done)
		}
	}
}

// processBatch is upstream's checkQuotas: each request is checked in
// turn against the quotas as the ones before it left them; the quotas
// that changed are written once (resourceVersion precondition); when a
// write loses to another writer, the requests not decided yet are
// checked again against the current version of the quotas whose write
// failed, up to quotaRetries times.
func (p *resourceQuota) processBatch(ctx context.Context, ns string, batch []*quotaWaiter) {
	fail := func(err error) {
		for _, w := range batch {
			if !w.decided {
				w.decided, w.result = true, err
			}
		}
	}
	objs, err := p.d.Getter.ListConsistent(ctx, grResourceQuotas, ns)
	if err != nil {
		fail(err)
		return
	}
	quotas := make([]corev1.ResourceQuota, 0, len(objs))
	for _, o := range objs {
		if q, ok := o.(*corev1.ResourceQuota); ok {
			quotas = append(quotas, *q.DeepCopy())
		}
	}
	for attempt := 0; ; attempt++ {
		original := make([]corev1.ResourceQuota, len(quotas))
		for i := range quotas {
			original[i] = *quotas[i].DeepCopy()
		}
		for _, w := range batch {
			if w.decided {
				continue
			}
			charged, err := p.check(quotas, w.a, w.ev)
			if err != nil {
				w.decided, w.result = true, err
				continue
			}
			if w.a.DryRun || p.d.Status == nil {
				w.decided = true
				continue
			}
			changed := false
			for i := range charged {
				if !quota.Equals(charged[i].Status.Used, quotas[i].Status.Used) {
					changed = true
					break
				}
			}
			if !changed {
				w.decided = true
				continue
			}
			quotas = charged
		}
		var failed []string
		var lastErr error
		for i := range quotas {
			if quota.Equals(quotas[i].Status.Used, original[i].Status.Used) {
				continue
			}
			if _, err := p.d.Status.UpdateStatus(ctx, grResourceQuotas, &quotas[i]); err != nil {
				failed, lastErr = append(failed, quotas[i].Name), err
			}
		}
		if len(failed) == 0 {
			fail(nil)
			return
		}
		if attempt >= quotaRetries || !apierrors.IsConflict(lastErr) {
			fail(lastErr)
			return
		}
		// Check again against the current version of the quotas whose
		// write lost (those written hold their charges already).
		var current []corev1.ResourceQuota
		for _, name := range failed {
			o, err := p.d.Getter.GetConsistent(ctx, grResourceQuotas, ns, name)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				fail(err)
				return
			}
			current = append(current, *o.(*corev1.ResourceQuota).DeepCopy())
		}
		quotas = current
	}
}

// check is upstream's CheckRequest: the quotas with this request's usage
// added to the ones it matches, or the refusal.
func (p *resourceQuota) check(quotas []corev1.ResourceQuota, a *Attributes, ev *quota.Evaluator) ([]corev1.ResourceQuota, error) {
	obj := a.Object
	var interesting []int
	for i := range quotas {
		q := &quotas[i]
		ok, err := ev.Matches(q, obj)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		restricted := ev.MatchingResources(quota.ResourceNames(q.Status.Hard))
		if ev.Constraints != nil {
			if err := ev.Constraints(restricted, obj); err != nil {
				return nil, forbidden(a, fmt.Errorf("failed quota: %s: %v", q.Name, err))
			}
		}
		for _, r := range restricted {
			if _, ok := q.Status.Used[r]; !ok {
				return nil, forbidden(a, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, joinNames(restricted)))
			}
		}
		interesting = append(interesting, i)
	}
	if len(interesting) == 0 {
		return quotas, nil
	}
	if m, err := meta.Accessor(obj); err == nil && m.GetNamespace() == "" {
		m.SetNamespace(a.Namespace)
	}
	now := p.d.Clock.Now()
	usage, err := ev.Usage(obj, now)
	if err != nil {
		return nil, err
	}
	if neg := quota.IsNegative(usage); len(neg) > 0 {
		return nil, forbidden(a, fmt.Errorf("quota usage is negative for resource(s): %s", joinNames(neg)))
	}
	delta := map[int]corev1.ResourceList{}
	for _, i := range interesting {
		delta[i] = usage
	}
	if a.Operation == Update {
		if a.OldObject == nil {
			return nil, forbidden(a, errors.New("unable to get previous usage since prior version of object was not found"))
		}
		if m, err := meta.Accessor(a.OldObject); err == nil && m.GetResourceVersion() != "" {
			prev, err := ev.Usage(a.OldObject, now)
			if err != nil {
				return nil, err
			}
			d := quota.SubtractNonNegative(usage, prev)
			for _, i := range interesting {
				ok, err := ev.Matches(&quotas[i], a.OldObject)
				if err != nil {
					return nil, err
				}
				if ok {
					delta[i] = d
				}
			}
		}
	}
	out := make([]corev1.ResourceQuota, len(quotas))
	for i := range quotas {
		out[i] = *quotas[i].DeepCopy()
	}
	for _, i := range interesting {
		d := quota.RemoveZeros(delta[i])
		if len(d) == 0 {
			continue
		}
		q := &out[i]
		hard := quota.ResourceNames(q.Status.Hard)
		requested := quota.Mask(d, hard)
		used := quota.Sum(q.Status.Used, requested)
		if a.Subresource != "status" {
			if ok, exceeded := quota.LessThanOrEqual(quota.Mask(used, quota.ResourceNames(requested)), q.Status.Hard); !ok {
				return nil, forbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
					quota.String(quota.Mask(requested, exceeded)), quota.String(quota.Mask(q.Status.Used, exceeded)),
					quota.String(quota.Mask(q.Status.Hard, exceeded))))
			}
		}
		q.Status.Used = used
	}
	return out, nil
}

func joinNames(ns []corev1.ResourceName) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}
