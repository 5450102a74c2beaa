package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/cluster"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// `skiff up`'s own node on the simulated runtime, with upstream's
// authorization (Node,RBAC) and NodeRestriction: the kubelet, as
// system:node:<host>, registers its Node (labelled skiff.sh/runtime=sim,
// Ready once node IPAM gave it a pod CIDR of --cluster-cidr), renews its
// Lease, runs a Deployment's pods with IPs of that CIDR (their env read
// from a secret and a configmap of theirs), records events and deletes a
// deleted pod at the end — and none of its requests is refused. With its
// kubeconfig, a service account token bound to its pod is granted, one
// for another node's pod refused.
func TestUpNodeWithNodeAuthorizer(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logs, forbidden := testenv.RecordForbidden(slog.DiscardHandler)
	var out bytes.Buffer
	up, err := cluster.NewUp(cluster.UpConfig{DataDir: dir, Storage: "memory", SecurePort: port, Out: &out,
		AuthorizationMode: "Node,RBAC", ContainerRuntime: "sim", ClusterCIDR: "10.77.0.0/16", Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- up.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("up returned %v", err)
		}
	}()
	var c *client.Client
	waitFor(t, "the API server", func() (bool, string) {
		cfg, err := client.LoadKubeconfig(cluster.KubeconfigPath(dir), "")
		if err != nil {
			return false, err.Error()
		}
		cfg.QPS = -1
		if c, err = client.New(cfg); err != nil {
			return false, err.Error()
		}
		_, err = client.For[*corev1.Namespace, *corev1.NamespaceList](c).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	name, err := cluster.NodeName()
	if err != nil {
		t.Fatal(err)
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](c)
	waitFor(t, "the node Ready with a pod CIDR", func() (bool, string) {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		}
		return ready && n.Spec.PodCIDR == "10.77.0.0/24" && n.Labels["skiff.sh/runtime"] == "sim", fmt.Sprint(n.Spec.PodCIDR, n.Labels, n.Status.Conditions)
	})
	if !strings.Contains(out.String(), "--container-runtime=sim: the node "+name+" runs a simulated runtime") {
		t.Errorf("output does not say the runtime is simulated:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "kubelet.kubeconfig")); err != nil {
		t.Errorf("kubelet kubeconfig: %v", err)
	}

	const ns = "default"
	if _, err := client.For[*corev1.Secret, *corev1.SecretList](c).Namespace(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"},
		StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*corev1.ConfigMap, *corev1.ConfigMapList](c).Namespace(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"},
		Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the default service account", func() (bool, string) {
		_, err := client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](c).Namespace(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "web", Image: "nginx", Env: []corev1.EnvVar{
				{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}},
				{Name: "C", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "k"}}},
			}}}}}}}
	if _, err := client.For[*appsv1.Deployment, *appsv1.DeploymentList](c).Namespace(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := client.For[*corev1.Pod, *corev1.PodList](c).Namespace(ns)
	cidr := netip.MustParsePrefix("10.77.0.0/24")
	var first string
	waitFor(t, "2 pods Running on the node with IPs of its pod CIDR", func() (bool, string) {
		l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		n := 0
		var got []string
		for _, p := range l.Items {
			got = append(got, p.Spec.NodeName+" "+string(p.Status.Phase)+" "+p.Status.PodIP)
			if ip, err := netip.ParseAddr(p.Status.PodIP); err == nil && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == name && cidr.Contains(ip) {
				n++
				first = p.Name
			}
		}
		return n == 2, strings.Join(got, ", ")
	})
	// What the kubelet's volume manager asks for a pod's service account
	// token volume: a token bound to a pod of its own node; none for a
	// pod of another node (the Node authorizer's graph).
	kcfg, err := client.LoadKubeconfig(filepath.Join(dir, "kubelet.kubeconfig"), "")
	if err != nil {
		t.Fatal(err)
	}
	kubeletClient, err := client.New(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := pods.Get(ctx, first, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"},
		Spec: corev1.PodSpec{NodeName: "other-node", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tokenFor := func(p *corev1.Pod) error {
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3607),
			BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}}}
		return client.For[*corev1.ServiceAccount, *corev1.ServiceAccountList](kubeletClient).Namespace(ns).Subresource(ctx, "default", "token", req, &authenticationv1.TokenRequest{})
	}
	if err := tokenFor(mine); err != nil {
		t.Errorf("the kubelet's token for its pod %s: %v", mine.Name, err)
	}
	if err := tokenFor(other); !apierrors.IsForbidden(err) {
		t.Errorf("the kubelet's token for another node's pod: %v, want Forbidden", err)
	}
	if _, err := client.For[*corev1.Secret, *corev1.SecretList](kubeletClient).Namespace(ns).Get(ctx, "s", metav1.GetOptions{}); err != nil {
		t.Errorf("the kubelet reads its pods' secret: %v", err)
	}
	if err := pods.Delete(ctx, other.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}

	if err := pods.Delete(ctx, first, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted pod gone (the kubelet's final delete)", func() (bool, string) {
		_, err := pods.Get(ctx, first, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	waitFor(t, "the kubelet's events", func() (bool, string) {
		l, err := client.For[*corev1.Event, *corev1.EventList](c).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range l.Items {
			if e.Source.Component == "kubelet" && e.Reason == "Killing" {
				return true, ""
			}
		}
		return false, fmt.Sprint(len(l.Items), " events")
	})
	var refused []string
	expected := 1 // the token for another node's pod
	for _, f := range forbidden() {
		if expected > 0 && strings.HasPrefix(f.User, "system:node:") && strings.Contains(f.URI, "/serviceaccounts/default/token") {
			expected--
			continue
		}
		if strings.HasPrefix(f.User, "system:node:") {
			refused = append(refused, f.String())
		}
	}
	if len(refused) > 0 {
		t.Errorf("the kubelet was refused %d requests:\n%s", len(refused), strings.Join(refused, "\n"))
	}
}
