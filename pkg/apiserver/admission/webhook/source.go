package webhook

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/apiserver/admission"
)

var (
	grMutatingConfigs   = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}
	grValidatingConfigs = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}
)

// hook is one webhook of a configuration, ready to match and call.
type hook struct {
	// uid identifies the webhook within the request (reinvocation):
	// configuration name and index.
	uid            string
	configName     string
	name           string
	rules          []admissionregistrationv1.RuleWithOperations
	matchPolicy    admissionregistrationv1.MatchPolicyType
	nsSelector     *metav1.LabelSelector
	objSelector    *metav1.LabelSelector
	conditions     []condition
	failurePolicy  admissionregistrationv1.FailurePolicyType
	sideEffects    *admissionregistrationv1.SideEffectClass
	timeout        time.Duration
	reviewVersions []string
	clientConfig   admissionregistrationv1.WebhookClientConfig
	// reinvoke is a mutating webhook's reinvocationPolicy IfNeeded.
	reinvoke bool
}

// ignoresFailures reports failurePolicy Ignore.
func (h *hook) ignoresFailures() bool { return h.failurePolicy == admissionregistrationv1.Ignore }

// condition is one compiled matchCondition.
type condition struct {
	name, expr string
	prog       cel.Program
	err        error // compilation error: an evaluation error when used
}

// source reads the webhook configurations of one kind from the watch
// cache on every request (a change takes effect as soon as the cache has
// it) and keeps the compiled form of the last set it saw.
type source struct {
	getter admission.Getter
	gr     schema.GroupResource

	mu    sync.Mutex
	key   string
	hooks []*hook
}

// webhooks returns every webhook, configurations sorted by name and each
// configuration's webhooks in order, as upstream.
func (s *source) webhooks(ctx context.Context) ([]*hook, error) {
	objs, err := s.getter.List(ctx, s.gr, "")
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, nil
	}
	metas := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok {
			metas = append(metas, m)
		}
	}
	sort.Slice(metas, func(i, j int) bool { return metas[i].GetName() < metas[j].GetName() })
	var kb strings.Builder
	for _, m := range metas {
		kb.WriteString(m.GetName())
		kb.WriteByte('/')
		kb.WriteString(m.GetResourceVersion())
		kb.WriteByte(',')
	}
	key := kb.String()
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == s.key {
		return s.hooks, nil
	}
	var hooks []*hook
	for _, m := range metas {
		switch c := m.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			for i := range c.Webhooks {
				w := &c.Webhooks[i]
				h := newHook(c.Name, i, w.Name, w.Rules, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector, w.MatchConditions,
					w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.ClientConfig)
				h.reinvoke = w.ReinvocationPolicy != nil && *w.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy
				hooks = append(hooks, h)
			}
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			for i := range c.Webhooks {
				w := &c.Webhooks[i]
				hooks = append(hooks, newHook(c.Name, i, w.Name, w.Rules, w.MatchPolicy, w.NamespaceSelector, w.ObjectSelector, w.MatchConditions,
					w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions, w.ClientConfig))
			}
		default:
			return nil, fmt.Errorf("unexpected webhook configuration %T", m)
		}
	}
	s.key, s.hooks = key, hooks
	return hooks, nil
}

func newHook(config string, idx int, name string, rules []admissionregistrationv1.RuleWithOperations,
	mp *admissionregistrationv1.MatchPolicyType, nsSel, objSel *metav1.LabelSelector, conds []admissionregistrationv1.MatchCondition,
	fp *admissionregistrationv1.FailurePolicyType, se *admissionregistrationv1.SideEffectClass, timeout *int32,
	versions []string, cc admissionregistrationv1.WebhookClientConfig) *hook {
	h := &hook{
		uid: fmt.Sprintf("%s/%d", config, idx), configName: config, name: name, rules: rules,
		matchPolicy: admissionregistrationv1.Equivalent, failurePolicy: admissionregistrationv1.Fail,
		sideEffects: se, timeout: 10 * time.Second, reviewVersions: versions, clientConfig: cc,
	}
	if mp != nil {
		h.matchPolicy = *mp
	}
	if fp != nil {
		h.failurePolicy = *fp
	}
	if timeout != nil {
		h.timeout = time.Duration(*timeout) * time.Second
	}
	h.nsSelector, h.objSelector = nsSel, objSel
	for _, c := range conds {
		h.conditions = append(h.conditions, compileCondition(c.Name, c.Expression))
	}
	return h
}

// versioned is the request's object and old object in one served
// version.
type versioned struct {
	obj, old runtime.Object
}
