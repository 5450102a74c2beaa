package volume

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// writeContents computes the payload of a configMap, secret, downwardAPI
// or projected volume and writes it atomically into its directory; with
// an fsGroup the files get the group and g+r (upstream's
// SetVolumeOwnership for read-only volumes).
func (m *Manager) writeContents(ctx context.Context, f *fetcher, pod *corev1.Pod, v *corev1.Volume, vs *volState) error {
	payload, err := m.payload(ctx, f, pod, &v.VolumeSource)
	if err != nil {
		return err
	}
	var fsGroup *int64
	if sc := pod.Spec.SecurityContext; sc != nil {
		fsGroup = sc.FSGroup
	}
	extra := os.FileMode(0)
	if fsGroup != nil {
		extra = roMask
	}
	_, err = writeAtomic(vs.path, payload, m.clock.Now(), extra, func() error {
		return setVolumeOwnership(vs.path, fsGroup, nil, true)
	})
	return err
}

func (m *Manager) payload(ctx context.Context, f *fetcher, pod *corev1.Pod, src *corev1.VolumeSource) (map[string]fileProjection, error) {
	switch {
	case src.ConfigMap != nil:
		s := src.ConfigMap
		return configMapPayload(ctx, f, pod.Namespace, s.Name, s.Items, s.DefaultMode, corev1.ConfigMapVolumeSourceDefaultMode, s.Optional)
	case src.Secret != nil:
		s := src.Secret
		return secretPayload(ctx, f, pod.Namespace, s.SecretName, s.Items, s.DefaultMode, corev1.SecretVolumeSourceDefaultMode, s.Optional)
	case src.DownwardAPI != nil:
		p, errs := m.downwardPayload(pod, src.DownwardAPI.Items, src.DownwardAPI.DefaultMode)
		return p, aggregate(errs)
	case src.Projected != nil:
		return m.projectedPayload(ctx, f, pod, src.Projected)
	}
	return nil, fmt.Errorf("not a content volume")
}

func isOptional(o *bool) bool { return o != nil && *o }

// configMapPayload is upstream's configmap MakePayload.
func configMapPayload(ctx context.Context, f *fetcher, ns, name string, items []corev1.KeyToPath, defaultMode *int32, def int32, optional *bool) (map[string]fileProjection, error) {
	cm, err := f.configMap(ctx, ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && isOptional(optional) {
			return map[string]fileProjection{}, nil
		}
		return nil, err
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyPayload(data, items, defaultMode, def, optional, "configmap references non-existent config key: ")
}

// secretPayload is upstream's secret MakePayload.
func secretPayload(ctx context.Context, f *fetcher, ns, name string, items []corev1.KeyToPath, defaultMode *int32, def int32, optional *bool) (map[string]fileProjection, error) {
	s, err := f.secret(ctx, ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && isOptional(optional) {
			return map[string]fileProjection{}, nil
		}
		return nil, err
	}
	return keyPayload(s.Data, items, defaultMode, def, optional, "references non-existent secret key: ")
}

func keyPayload(data map[string][]byte, items []corev1.KeyToPath, defaultMode *int32, def int32, optional *bool, missing string) (map[string]fileProjection, error) {
	mode := def
	if defaultMode != nil {
		mode = *defaultMode
	}
	out := map[string]fileProjection{}
	if len(items) == 0 {
		for k, v := range data {
			out[k] = fileProjection{Data: v, Mode: mode}
		}
		return out, nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if isOptional(optional) {
				continue
			}
			return nil, fmt.Errorf("%s%s", missing, it.Key)
		}
		fm := mode
		if it.Mode != nil {
			fm = *it.Mode
		}
		out[it.Path] = fileProjection{Data: v, Mode: fm}
	}
	return out, nil
}

// projectedPayload is upstream's projected collectData: configMap,
// secret, downwardAPI and serviceAccountToken sources (clusterTrustBundle
// and podCertificate are not supported: an error).
func (m *Manager) projectedPayload(ctx context.Context, f *fetcher, pod *corev1.Pod, src *corev1.ProjectedVolumeSource) (map[string]fileProjection, error) {
	defaultMode := corev1.ProjectedVolumeSourceDefaultMode
	if src.DefaultMode != nil {
		defaultMode = *src.DefaultMode
	}
	var fsGroup *int64
	if sc := pod.Spec.SecurityContext; sc != nil {
		fsGroup = sc.FSGroup
	}
	fsUser := fsUserFrom(pod)
	out := map[string]fileProjection{}
	var errs []error
	merge := func(p map[string]fileProjection) {
		for k, v := range p {
			out[k] = v
		}
	}
	for _, s := range src.Sources {
		switch {
		case s.ConfigMap != nil:
			p, err := configMapPayload(ctx, f, pod.Namespace, s.ConfigMap.Name, s.ConfigMap.Items, &defaultMode, defaultMode, s.ConfigMap.Optional)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			merge(p)
		case s.Secret != nil:
			p, err := secretPayload(ctx, f, pod.Namespace, s.Secret.Name, s.Secret.Items, &defaultMode, defaultMode, s.Secret.Optional)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			merge(p)
		case s.DownwardAPI != nil:
			p, e := m.downwardPayload(pod, s.DownwardAPI.Items, &defaultMode)
			errs = append(errs, e...)
			merge(p)
		case s.ServiceAccountToken != nil:
			tp := s.ServiceAccountToken
			// With fsGroup (or a common runAsUser) the token is 0600 and
			// SetVolumeOwnership makes it 0640.
			mode := defaultMode
			if fsUser != nil || fsGroup != nil {
				mode = 0o600
			}
			exp := int64(3600)
			if tp.ExpirationSeconds != nil {
				exp = *tp.ExpirationSeconds
			}
			tok, err := m.tokens.get(ctx, pod, tp.Audience, exp)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out[tp.Path] = fileProjection{Data: []byte(tok), Mode: mode, FsUser: fsUser}
		case s.ClusterTrustBundle != nil:
			errs = append(errs, fmt.Errorf("clusterTrustBundle projections are not supported by skiff's kubelet"))
		case s.PodCertificate != nil:
			errs = append(errs, fmt.Errorf("podCertificate projections are not supported by skiff's kubelet"))
		}
	}
	if err := aggregate(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// fsUserFrom is upstream's FsUserFrom: the runAsUser every container of
// the pod runs as, nil when they differ or one has none.
func fsUserFrom(pod *corev1.Pod) *int64 {
	var user *int64
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		var u *int64
		if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
			u = c.SecurityContext.RunAsUser
		} else if pod.Spec.SecurityContext != nil {
			u = pod.Spec.SecurityContext.RunAsUser
		}
		if u == nil {
			return nil
		}
		if user != nil && *user != *u {
			return nil
		}
		user = u
	}
	return user
}

// aggregateError renders several errors as upstream's utilerrors
// Aggregate: the message alone for one, "[a, b]" for more.
type aggregateError []error

func (a aggregateError) Error() string {
	if len(a) == 1 {
		return a[0].Error()
	}
	seen := map[string]bool{}
	var msgs []string
	for _, e := range a {
		if m := e.Error(); !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func (a aggregateError) Unwrap() []error { return a }

func aggregate(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return aggregateError(errs)
}
