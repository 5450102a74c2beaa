package volume

import (
	"context"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
)

// objectKey names a configMap or secret.
type objectKey struct {
	kind      string // "configmap" or "secret"
	namespace string
	name      string
}

type cached struct {
	obj any // *corev1.ConfigMap or *corev1.Secret
	err error
	at  time.Time
}

// objectCache GETs configMaps and secrets by name (the Node authorizer
// lets a kubelet read only those of its pods: never a list) and keeps
// them for a TTL, as upstream's TTL-based manager, so that the pods of a
// Deployment starting together share one GET.
type objectCache struct {
	m  *Manager
	mu sync.Mutex
	by map[objectKey]cached
}

// fetcher reads objects for one SetUp or one refresh round: fresh (the
// refresh) GETs each object once per round, else the cache answers
// within its TTL.
type fetcher struct {
	c     *objectCache
	fresh bool
	memo  map[objectKey]cached
}

func (c *objectCache) fetcher(fresh bool) *fetcher {
	return &fetcher{c: c, fresh: fresh, memo: map[objectKey]cached{}}
}

func (f *fetcher) get(ctx context.Context, k objectKey) (any, error) {
	if r, ok := f.memo[k]; ok {
		return r.obj, r.err
	}
	now := f.c.m.clock.Now()
	if !f.fresh {
		f.c.mu.Lock()
		r, ok := f.c.by[k]
		f.c.mu.Unlock()
		if ok && now.Sub(r.at) < f.c.m.cfg.CacheTTL {
			return r.obj, r.err
		}
	}
	var obj any
	var err error
	switch k.kind {
	case "configmap":
		obj, err = client.For[*corev1.ConfigMap, *corev1.ConfigMapList](f.c.m.cfg.Client).Namespace(k.namespace).Get(ctx, k.name, metav1.GetOptions{})
	case "secret":
		obj, err = client.For[*corev1.Secret, *corev1.SecretList](f.c.m.cfg.Client).Namespace(k.namespace).Get(ctx, k.name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		// Upstream's object managers answer with the singular kind:
		// `configmap "x" not found`, `secret "x" not found`.
		err = apierrors.NewNotFound(schema.GroupResource{Resource: k.kind}, k.name)
		obj = nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err // not cached: the next attempt asks again
	}
	r := cached{obj: obj, err: err, at: now}
	f.memo[k] = r
	f.c.mu.Lock()
	f.c.by[k] = r
	f.c.mu.Unlock()
	return obj, err
}

func (f *fetcher) configMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	o, err := f.get(ctx, objectKey{"configmap", ns, name})
	if err != nil {
		return nil, err
	}
	return o.(*corev1.ConfigMap), nil
}

func (f *fetcher) secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	o, err := f.get(ctx, objectKey{"secret", ns, name})
	if err != nil {
		return nil, err
	}
	return o.(*corev1.Secret), nil
}

// prune drops entries older than max (called by the refresh loop).
func (c *objectCache) prune(now time.Time, max time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, r := range c.by {
		if now.Sub(r.at) > max {
			delete(c.by, k)
		}
	}
}

// tokenKey identifies a service account token a pod's volume asked for.
type tokenKey struct {
	namespace, serviceAccount, audience string
	expirationSeconds                   int64
	pod                                 types.UID
}

// tokenManager requests service account tokens through the TokenRequest
// API (serviceaccounts/<sa>/token, bound to the pod) and keeps them until
// upstream's token manager would refresh them: past 80% of their lifetime
// or older than 24 h.
type tokenManager struct {
	m      *Manager
	mu     sync.Mutex
	tokens map[tokenKey]*authenticationv1.TokenRequest
}

const maxTokenTTL = 24 * time.Hour

func (t *tokenManager) get(ctx context.Context, pod *corev1.Pod, audience string, expirationSeconds int64) (string, error) {
	k := tokenKey{pod.Namespace, pod.Spec.ServiceAccountName, audience, expirationSeconds, pod.UID}
	now := t.m.clock.Now()
	t.mu.Lock()
	cur := t.tokens[k]
	t.mu.Unlock()
	if cur != nil && !requiresRefresh(cur, now) {
		return cur.Status.Token, nil
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &expirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
	}}
	if audience != "" {
		req.Spec.Audiences = []string{audience}
	}
	out := &authenticationv1.TokenRequest{}
	sa := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](t.m.cfg.Client).Namespace(pod.Namespace)
	err := sa.Subresource(ctx, pod.Spec.ServiceAccountName, "token", req, out)
	if err == nil && out.Status.Token == "" {
		err = errEmptyToken
	}
	if err != nil {
		switch {
		case cur == nil:
			return "", fmtErr("failed to fetch token: %v", err)
		case !now.Before(cur.Status.ExpirationTimestamp.Time):
			return "", fmtErr("token %s/%s expired and refresh failed: %v", pod.Namespace, pod.Spec.ServiceAccountName, err)
		default:
			t.m.log.Warn("couldn't update token", "pod", pod.Namespace+"/"+pod.Name, "serviceAccount", pod.Spec.ServiceAccountName, "err", err)
			return cur.Status.Token, nil
		}
	}
	if out.Spec.ExpirationSeconds == nil {
		out.Spec.ExpirationSeconds = &expirationSeconds
	}
	t.mu.Lock()
	t.tokens[k] = out
	t.mu.Unlock()
	return out.Status.Token, nil
}

// requiresRefresh is upstream's rule (without its jitter): a token is
// refreshed once it is older than 24 h or within 20% of its lifetime
// (whole seconds) of its expiry.
func requiresRefresh(tr *authenticationv1.TokenRequest, now time.Time) bool {
	if tr.Spec.ExpirationSeconds == nil {
		return false
	}
	secs := *tr.Spec.ExpirationSeconds
	exp := tr.Status.ExpirationTimestamp.Time
	iat := exp.Add(-time.Duration(secs) * time.Second)
	if now.After(iat.Add(maxTokenTTL)) {
		return true
	}
	return now.After(exp.Add(-time.Duration(secs*20/100) * time.Second))
}

// forget drops the tokens of pod uid.
func (t *tokenManager) forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.tokens {
		if k.pod == uid {
			delete(t.tokens, k)
		}
	}
}
