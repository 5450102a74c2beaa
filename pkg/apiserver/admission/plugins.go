package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	grNamespaces      = schema.GroupResource{Resource: "namespaces"}
	grPods            = schema.GroupResource{Resource: "pods"}
	grNodes           = schema.GroupResource{Resource: "nodes"}
	grServiceAccounts = schema.GroupResource{Resource: "serviceaccounts"}
	grLimitRanges     = schema.GroupResource{Resource: "limitranges"}
	grPVCs            = schema.GroupResource{Resource: "persistentvolumeclaims"}
	grPriorityClasses = schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}
	grStorageClasses  = schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}
)

func isPodCreate(a *Attributes) (*corev1.Pod, bool) {
	if a.Resource != grPods || a.Subresource != "" || a.Operation != Create {
		return nil, false
	}
	p, ok := a.Object.(*corev1.Pod)
	return p, ok
}

// --- NamespaceLifecycle ----------------------------------------------------

// namespaceLifecycle refuses new objects in namespaces that do not exist or
// are terminating, and the deletion of the system namespaces. A namespace
// deleted a moment ago is looked up in storage, not in the watch cache,
// which may not show it Terminating yet.
type namespaceLifecycle struct {
	d       Deps
	mu      sync.Mutex
	deleted map[string]time.Time
}

// forceLiveLookupTTL is how long after a namespace deletion lookups bypass
// the cache (upstream uses the same 30 s).
const forceLiveLookupTTL = 30 * time.Second

func (p *namespaceLifecycle) recentlyDeleted(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.d.Clock.Now()
	for n, at := range p.deleted {
		if now.Sub(at) > forceLiveLookupTTL {
			delete(p.deleted, n)
		}
	}
	_, ok := p.deleted[name]
	return ok
}

func (*namespaceLifecycle) Name() string              { return "NamespaceLifecycle" }
func (*namespaceLifecycle) Handles(op Operation) bool { return op == Create || op == Delete }

var immortalNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

func (p *namespaceLifecycle) Validate(ctx context.Context, a *Attributes) error {
	if a.Operation == Delete {
		if a.Resource == grNamespaces {
			if immortalNamespaces[a.Name] {
				return forbidden(a, errorf("this namespace may not be deleted"))
			}
			p.mu.Lock()
			p.deleted[a.Name] = p.d.Clock.Now()
			p.mu.Unlock()
		}
		return nil
	}
	if a.Namespace == "" || a.Resource == grNamespaces {
		return nil
	}
	get := p.d.Getter.Get
	if p.recentlyDeleted(a.Namespace) {
		get = p.d.Getter.GetConsistent
	}
	obj, err := get(ctx, grNamespaces, "", a.Namespace)
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(grNamespaces, a.Namespace)
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	ns := obj.(*corev1.Namespace)
	if ns.Status.Phase == corev1.NamespaceTerminating || ns.DeletionTimestamp != nil {
		// Events about the terminating namespace's content are still allowed.
		if a.Resource.Resource == "events" {
			return nil
		}
		err := forbidden(a, errorf("unable to create new content in namespace %s because it is being terminated", a.Namespace))
		err.(*apierrors.StatusError).ErrStatus.Details.Causes = append(err.(*apierrors.StatusError).ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
			Field:   "metadata.namespace",
		})
		return err
	}
	return nil
}

// --- LimitRanger -----------------------------------------------------------

// limitRanger applies the namespace's LimitRange defaults to pod containers
// and enforces its minimum and maximum.
type limitRanger struct{ d Deps }

func (*limitRanger) Name() string              { return "LimitRanger" }
func (*limitRanger) Handles(op Operation) bool { return op == Create }

func (p *limitRanger) ranges(ctx context.Context, ns string) ([]*corev1.LimitRange, error) {
	objs, err := p.d.Getter.List(ctx, grLimitRanges, ns)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.LimitRange, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*corev1.LimitRange))
	}
	return out, nil
}

func (p *limitRanger) Admit(ctx context.Context, a *Attributes) error {
	pod, ok := isPodCreate(a)
	if !ok {
		return nil
	}
	ranges, err := p.ranges(ctx, a.Namespace)
	if err != nil || len(ranges) == 0 {
		return err
	}
	var set []string
	for _, lr := range ranges {
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			apply := func(c *corev1.Container) {
				for res, q := range item.Default {
					if _, ok := c.Resources.Limits[res]; !ok {
						if c.Resources.Limits == nil {
							c.Resources.Limits = corev1.ResourceList{}
						}
						c.Resources.Limits[res] = q.DeepCopy()
						set = append(set, fmt.Sprintf("%s limit for container %s", res, c.Name))
					}
				}
				for res, q := range item.DefaultRequest {
					if _, ok := c.Resources.Requests[res]; !ok {
						if c.Resources.Requests == nil {
							c.Resources.Requests = corev1.ResourceList{}
						}
						c.Resources.Requests[res] = q.DeepCopy()
						set = append(set, fmt.Sprintf("%s request for container %s", res, c.Name))
					}
				}
			}
			for i := range pod.Spec.InitContainers {
				apply(&pod.Spec.InitContainers[i])
			}
			for i := range pod.Spec.Containers {
				apply(&pod.Spec.Containers[i])
			}
		}
	}
	if len(set) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		sort.Strings(set)
		pod.Annotations["kubernetes.io/limit-ranger"] = "LimitRanger plugin set: " + strings.Join(set, ", ") + ""
	}
	return nil
}

func (p *limitRanger) Validate(ctx context.Context, a *Attributes) error {
	pod, ok := isPodCreate(a)
	if !ok {
		return nil
	}
	ranges, err := p.ranges(ctx, a.Namespace)
	if err != nil || len(ranges) == 0 {
		return err
	}
	var problems []string
	for _, lr := range ranges {
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
				for res, min := range item.Min {
					if q, ok := c.Resources.Requests[res]; !ok {
						problems = append(problems, fmt.Sprintf("minimum %s usage per Container is %s.  No request is specified", res, min.String()))
					} else if q.Cmp(min) < 0 {
						problems = append(problems, fmt.Sprintf("minimum %s usage per Container is %s, but request is %s", res, min.String(), q.String()))
					}
				}
				for res, max := range item.Max {
					if q, ok := c.Resources.Limits[res]; !ok {
						problems = append(problems, fmt.Sprintf("maximum %s usage per Container is %s.  No limit is specified", res, max.String()))
					} else if q.Cmp(max) > 0 {
						problems = append(problems, fmt.Sprintf("maximum %s usage per Container is %s, but limit is %s", res, max.String(), q.String()))
					}
				}
				for res, ratio := range item.MaxLimitRequestRatio {
					l, lok := c.Resources.Limits[res]
					r, rok := c.Resources.Requests[res]
					if lok && rok && r.Sign() > 0 {
						got := float64(l.MilliValue()) / float64(r.MilliValue())
						if got > float64(ratio.MilliValue())/1000 {
							problems = append(problems, fmt.Sprintf("%s max limit to request ratio per Container is %s, but provided ratio is %f", res, ratio.String(), got))
						}
					}
				}
			}
		}
	}
	if len(problems) > 0 {
		return forbidden(a, errorf("[%s]", strings.Join(problems, ", ")))
	}
	return nil
}

// --- ServiceAccount --------------------------------------------------------

// serviceAccount gives pods the namespace's "default" service account,
// checks that the account exists, and mounts its API credentials as the
// projected volume kube-api-access-<suffix>.
type serviceAccount struct{ d Deps }

func (*serviceAccount) Name() string              { return "ServiceAccount" }
func (*serviceAccount) Handles(op Operation) bool { return op == Create }

const (
	serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	mirrorPodAnnotation     = "kubernetes.io/config.mirror"
)

func (p *serviceAccount) Admit(ctx context.Context, a *Attributes) error {
	pod, ok := isPodCreate(a)
	if !ok {
		return nil
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default"
	}
	obj, err := p.d.Getter.Get(ctx, grServiceAccounts, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return forbidden(a, errorf("error looking up service account %s/%s: serviceaccount %q not found", a.Namespace, pod.Spec.ServiceAccountName, pod.Spec.ServiceAccountName))
		}
		return apierrors.NewInternalError(err)
	}
	sa := obj.(*corev1.ServiceAccount)
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = append([]corev1.LocalObjectReference(nil), sa.ImagePullSecrets...)
	}
	automount := true
	if sa.AutomountServiceAccountToken != nil {
		automount = *sa.AutomountServiceAccountToken
	}
	if pod.Spec.AutomountServiceAccountToken != nil {
		automount = *pod.Spec.AutomountServiceAccountToken
	}
	if !automount {
		return nil
	}
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.MountPath == serviceAccountMountPath {
				return nil // the pod brings its own credentials
			}
		}
	}
	name := "kube-api-access-" + randomSuffix(p.d, 5)
	pod.Spec.Volumes = append(pod.Spec.Volumes, tokenVolume(name))
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: serviceAccountMountPath}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].VolumeMounts = append(pod.Spec.InitContainers[i].VolumeMounts, mount)
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].VolumeMounts = append(pod.Spec.Containers[i].VolumeMounts, mount)
	}
	return nil
}

// tokenVolume is the projected volume upstream mounts for API access.
func tokenVolume(name string) corev1.Volume {
	mode := int32(0644)
	expiry := int64(3607)
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &expiry, Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path:     "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}}}
}

const suffixChars = "bcdfghjklmnpqrstvwxz2456789"

func randomSuffix(d Deps, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = suffixChars[d.Rand.IntN(len(suffixChars))]
	}
	return string(b)
}

// --- TaintNodesByCondition -------------------------------------------------

// taintNodesByCondition marks new nodes not-ready until the node lifecycle
// controller sees them Ready.
type taintNodesByCondition struct{}

func (*taintNodesByCondition) Name() string              { return "TaintNodesByCondition" }
func (*taintNodesByCondition) Handles(op Operation) bool { return op == Create }

func (*taintNodesByCondition) Admit(_ context.Context, a *Attributes) error {
	if a.Resource != grNodes || a.Subresource != "" {
		return nil
	}
	node, ok := a.Object.(*corev1.Node)
	if !ok {
		return nil
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule {
			return nil
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	return nil
}

// --- Priority --------------------------------------------------------------

// priority resolves a pod's priorityClassName into its priority value.
type priority struct{ d Deps }

func (*priority) Name() string              { return "Priority" }
func (*priority) Handles(op Operation) bool { return op == Create }

func (p *priority) Admit(ctx context.Context, a *Attributes) error {
	pod, ok := isPodCreate(a)
	if !ok {
		return nil
	}
	lower := corev1.PreemptLowerPriority
	var (
		value  int32
		policy = &lower // what a pod without a priority class gets
	)
	if pod.Spec.PriorityClassName == "" {
		classes, err := p.d.Getter.List(ctx, grPriorityClasses, "")
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		var def *schedulingv1.PriorityClass
		for _, o := range classes {
			pc := o.(*schedulingv1.PriorityClass)
			if pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
				def = pc
			}
		}
		if def != nil {
			pod.Spec.PriorityClassName = def.Name
			value = def.Value
			if def.PreemptionPolicy != nil {
				policy = def.PreemptionPolicy
			}
		}
	} else {
		obj, err := p.d.Getter.Get(ctx, grPriorityClasses, "", pod.Spec.PriorityClassName)
		if apierrors.IsNotFound(err) {
			return forbidden(a, errorf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		pc := obj.(*schedulingv1.PriorityClass)
		value = pc.Value
		if pc.PreemptionPolicy != nil {
			policy = pc.PreemptionPolicy
		}
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
		return forbidden(a, errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, value))
	}
	pod.Spec.Priority = &value
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return forbidden(a, errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		pol := *policy
		pod.Spec.PreemptionPolicy = &pol
	}
	return nil
}

func (p *priority) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource != grPriorityClasses || a.Operation != Create {
		return nil
	}
	pc, ok := a.Object.(*schedulingv1.PriorityClass)
	if !ok || !pc.GlobalDefault {
		return nil
	}
	classes, err := p.d.Getter.List(ctx, grPriorityClasses, "")
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	for _, o := range classes {
		if other := o.(*schedulingv1.PriorityClass); other.GlobalDefault && other.Name != pc.Name {
			return forbidden(a, errorf("PriorityClass %v is already marked as default. Only one default can exist", other.Name))
		}
	}
	return nil
}

// --- DefaultTolerationSeconds ----------------------------------------------

// defaultTolerationSeconds lets pods stay 300 s on a node that became
// not-ready or unreachable before they are evicted.
type defaultTolerationSeconds struct{}

func (*defaultTolerationSeconds) Name() string              { return "DefaultTolerationSeconds" }
func (*defaultTolerationSeconds) Handles(op Operation) bool { return op == Create }

func (*defaultTolerationSeconds) Admit(_ context.Context, a *Attributes) error {
	pod, ok := isPodCreate(a)
	if !ok {
		return nil
	}
	seconds := int64(300)
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		tolerated := false
		for _, t := range pod.Spec.Tolerations {
			if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
				tolerated = true
				break
			}
		}
		if !tolerated {
			s := seconds
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
				Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &s,
			})
		}
	}
	return nil
}

// --- DefaultStorageClass ---------------------------------------------------

// defaultStorageClass gives claims without a class the default one.
type defaultStorageClass struct{ d Deps }

func (*defaultStorageClass) Name() string              { return "DefaultStorageClass" }
func (*defaultStorageClass) Handles(op Operation) bool { return op == Create }

const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

func (p *defaultStorageClass) Admit(ctx context.Context, a *Attributes) error {
	if a.Resource != grPVCs || a.Subresource != "" {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok || pvc.Spec.StorageClassName != nil {
		return nil
	}
	classes, err := p.d.Getter.List(ctx, grStorageClasses, "")
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	var def *storagev1.StorageClass
	for _, o := range classes {
		sc := o.(*storagev1.StorageClass)
		if sc.Annotations[defaultClassAnnotation] != "true" {
			continue
		}
		// Several defaults: the newest wins, as upstream.
		if def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time) {
			def = sc
		}
	}
	if def != nil {
		name := def.Name
		pvc.Spec.StorageClassName = &name
	}
	return nil
}
