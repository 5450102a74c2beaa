package controllermanager_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/controllermanager"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The node IPAM controller in the manager, as its service account
// (node-controller) under RBAC: a new node gets a CIDR of --cluster-cidr.
func TestManagerAllocatesNodeCIDRs(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{RBAC: true})
	m, err := controllermanager.New(controllermanager.Config{ClientConfig: managerClientConfig(t, env), UseServiceAccountCredentials: true,
		Controllers: []string{"nodeipam"},
		NodeIPAM:    controllermanager.NodeIPAMConfig{AllocateNodeCIDRs: true, ClusterCIDR: "10.42.0.0/16", NodeCIDRMaskSize: 24}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	nodes := client.For[*corev1.Node, *corev1.NodeList](mustClient(t, env))
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := nodes.Get(ctx, "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.Spec.PodCIDR != "" {
			if n.Spec.PodCIDR != "10.42.0.0/24" || strings.Join(n.Spec.PodCIDRs, ",") != "10.42.0.0/24" {
				t.Fatalf("podCIDR %s, podCIDRs %v", n.Spec.PodCIDR, n.Spec.PodCIDRs)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("node n1 got no podCIDR")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Invalid node IPAM flags stop the manager before any controller runs.
func TestNodeIPAMFlagErrors(t *testing.T) {
	env := testenv.StartT(t, testenv.Config{})
	tests := []struct {
		cfg  controllermanager.NodeIPAMConfig
		want string
	}{
		{controllermanager.NodeIPAMConfig{AllocateNodeCIDRs: true}, "Must specify --cluster-cidr if --allocate-node-cidrs is set"},
		{controllermanager.NodeIPAMConfig{AllocateNodeCIDRs: true, ClusterCIDR: "10.42.0.0/16", NodeCIDRMaskSize: 8}, "mask size of cluster CIDR must be less than or equal to --node-cidr-mask-size"},
		{controllermanager.NodeIPAMConfig{AllocateNodeCIDRs: true, ClusterCIDR: "10.42.0.0/16,fd00::/56", NodeCIDRMaskSize: 24}, "not allowed with dual-stack clusters"},
	}
	for _, tt := range tests {
		m, err := controllermanager.New(controllermanager.Config{ClientConfig: clientConfig(env), Controllers: []string{"nodeipam"}, NodeIPAM: tt.cfg})
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = m.Run(ctx)
			cancel()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
}
