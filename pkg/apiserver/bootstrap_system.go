package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/storage"
)

// The objects upstream's API server keeps in kube-system by itself (not
// through the controller manager), which its clients look for:
//   - ConfigMap extension-apiserver-authentication: the client CA that
//     aggregated API servers and webhooks use to trust callers;
//   - ConfigMap kube-apiserver-legacy-service-account-token-tracking: the
//     date tracking of legacy token use began;
//   - Lease apiserver-<hash>: this API server's identity, renewed every
//     10 s (controllers count API servers by these).

var (
	grConfigMaps = schema.GroupResource{Resource: "configmaps"}
	grLeases     = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
)

// Identity lease timing, as upstream: renewed every 10 s, valid an hour.
const (
	identityLeaseRenew    = 10 * time.Second
	identityLeaseDuration = int32(3600)
)

// ensureSystemConfigMaps creates (or brings up to date) the ConfigMaps
// upstream's API server publishes in kube-system.
func (s *Server) ensureSystemConfigMaps(ctx context.Context) error {
	if s.stores[grConfigMaps] == nil {
		return nil
	}
	auth := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "extension-apiserver-authentication"},
		Data:       map[string]string{},
	}
	if len(s.cfg.ClientCAPEM) > 0 {
		auth.Data["client-ca-file"] = string(s.cfg.ClientCAPEM)
	}
	if len(s.cfg.RequestHeaderCAPEM) > 0 {
		// As upstream's, the lists are JSON arrays.
		names, _ := json.Marshal(append([]string{}, s.cfg.RequestHeaderAllowedNames...))
		auth.Data["requestheader-client-ca-file"] = string(s.cfg.RequestHeaderCAPEM)
		auth.Data["requestheader-allowed-names"] = string(names)
		auth.Data["requestheader-username-headers"] = `["X-Remote-User"]`
		auth.Data["requestheader-group-headers"] = `["X-Remote-Group"]`
		auth.Data["requestheader-extra-headers-prefix"] = `["X-Remote-Extra-"]`
	}
	if err := s.ensureData(ctx, auth); err != nil {
		return err
	}
	tracking := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "kube-apiserver-legacy-service-account-token-tracking"},
		Data:       map[string]string{"since": s.cfg.Clock.Now().UTC().Format(time.DateOnly)},
	}
	return s.ensure(ctx, grConfigMaps, tracking)
}

// ensureData creates cm, or updates its data when it differs (the client
// CA may have been rotated between runs).
func (s *Server) ensureData(ctx context.Context, cm *corev1.ConfigMap) error {
	if err := s.ensure(ctx, grConfigMaps, cm.DeepCopy()); err != nil {
		return err
	}
	_, _, err := s.stores[grConfigMaps].Update(ctx, cm.Namespace, cm.Name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		cur := old.(*corev1.ConfigMap).DeepCopy()
		cur.Data = cm.Data
		return cur, nil
	}}, nil, nil, registry.UpdateOptions{NoCreate: true})
	return err
}

// identityLeaseName is upstream's name for an API server's identity lease:
// "apiserver-" and a hash of the host name.
func identityLeaseName(host string) string {
	sum := sha256.Sum256([]byte(host))
	return "apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// startIdentity creates this API server's identity lease and starts
// keeping it renewed until ctx ends. The first renewal and the ticker
// happen before it returns: once Start is done the lease exists, and the
// renewal period counts from then (not from whenever a goroutine gets to
// run).
func (s *Server) startIdentity(ctx context.Context, holder string) {
	renew := func() {
		if err := s.renewIdentity(ctx, holder); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Debug("renewing the API server identity lease", "err", err)
		}
	}
	t := s.cfg.Clock.NewTicker(identityLeaseRenew)
	renew()
	go func() {
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			}
			renew()
		}
	}()
}

// renewIdentity creates or renews the identity lease.
func (s *Server) renewIdentity(ctx context.Context, holder string) error {
	st := s.stores[grLeases]
	if st == nil {
		return nil
	}
	host, _ := os.Hostname()
	name := identityLeaseName(host)
	now := metav1.NewMicroTime(s.cfg.Clock.Now())
	dur := identityLeaseDuration
	_, err := st.Get(ctx, metav1.NamespaceSystem, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: name, Labels: map[string]string{
				"apiserver.kubernetes.io/identity": "kube-apiserver", "kubernetes.io/hostname": host,
			}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, AcquireTime: &now, RenewTime: &now},
		}
		_, err = st.Create(ctx, metav1.NamespaceSystem, lease, nil, false)
		return err
	}
	if err != nil {
		return err
	}
	_, _, err = st.Update(ctx, metav1.NamespaceSystem, name, &objInfo{update: func(_ context.Context, old runtime.Object) (runtime.Object, error) {
		l := storage.Unwrap(old).(*coordinationv1.Lease).DeepCopy()
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &holder, &dur, &now
		return l, nil
	}}, nil, nil, registry.UpdateOptions{NoCreate: true})
	return err
}

// identityHolder is the lease holder of this run: the lease name and a
// fresh uid, so that a restart shows as a new holder.
func (s *Server) identityHolder() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s_%s", identityLeaseName(host), registry.NewUID(s.cfg.Rand))
}
