package apiserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The objects upstream's API server creates at start exist.
func TestSystemObjectsAtStart(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	c := start(t, testenv.Config{Clock: fake})
	var auth corev1.ConfigMap
	c.call(http.MethodGet, "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", nil, http.StatusOK, &auth)
	if !strings.Contains(auth.Data["client-ca-file"], "BEGIN CERTIFICATE") {
		t.Errorf("client-ca-file = %q", auth.Data["client-ca-file"])
	}
	var tracking corev1.ConfigMap
	c.call(http.MethodGet, "/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking", nil, http.StatusOK, &tracking)
	if tracking.Data["since"] != "2026-03-04" {
		t.Errorf("since = %q", tracking.Data["since"])
	}
	var leases coordinationv1.LeaseList
	c.call(http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=apiserver.kubernetes.io/identity%3Dkube-apiserver", nil, http.StatusOK, &leases)
	if len(leases.Items) != 1 {
		t.Fatalf("%d identity leases, want 1", len(leases.Items))
	}
	l := leases.Items[0]
	if !strings.HasPrefix(l.Name, "apiserver-") || l.Spec.HolderIdentity == nil || !strings.HasPrefix(*l.Spec.HolderIdentity, l.Name+"_") ||
		l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 3600 || l.Labels["kubernetes.io/hostname"] == "" {
		t.Errorf("identity lease = %+v", l)
	}
	// Renewed every 10 s.
	first := l.Spec.RenewTime.Time
	fake.Step(10 * time.Second)
	eventually(t, "the identity lease to be renewed", func() bool {
		var cur coordinationv1.Lease
		c.call(http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"+l.Name, nil, http.StatusOK, &cur)
		return cur.Spec.RenewTime != nil && cur.Spec.RenewTime.Time.After(first)
	})
}
