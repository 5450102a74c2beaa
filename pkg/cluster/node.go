package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/client/record"
	"github.com/skiff-sh/skiff/pkg/kubeconfig"
	"github.com/skiff-sh/skiff/pkg/kubelet"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/hollow"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
	"github.com/skiff-sh/skiff/pkg/pki"
)

// The node of `skiff up` (component "kubelet"): one kubelet in the
// process, named after the host (lowercase, as upstream's kubelet names
// its node), with its own identity system:node:<name> in group
// system:nodes (a client certificate of the cluster CA, as kubeadm gives
// the kubelet), so that the Node authorizer and NodeRestriction admission
// (which Up enables, as kubeadm does) limit it to its own Node, Lease and
// the pods bound to it and what they reference.

// KubeletKubeconfigPath is where Up writes the node's kubeconfig (user
// system:node:<host>), for a `skiff kubelet` run beside
// `skiff up --disable=kubelet` on the same host.
func KubeletKubeconfigPath(dataDir string) string {
	return filepath.Join(dataDir, "kubelet.kubeconfig")
}

// KubeletDir is the kubelet's root directory under the data directory.
func KubeletDir(dataDir string) string { return filepath.Join(dataDir, "kubelet") }

// NodeName is the name of Up's node: the host name, lowercase.
func NodeName() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("node name: %w", err)
	}
	return strings.ToLower(h), nil
}

// nodePlan is what Up's node will run.
type nodePlan struct {
	name    string
	message string // said in Up's output
	run     func(context.Context) error
}

// kubeletQPS and kubeletBurst are upstream's kubelet --kube-api-qps and
// --kube-api-burst defaults.
const (
	kubeletQPS   = 50
	kubeletBurst = 100
)

// planNode issues the node's certificate and kubeconfig and builds its
// kubelet.
func (u *Up) planNode(server string, ca *pki.KeyPair, nodeIP string, now time.Time) (*nodePlan, error) {
	cfg := u.cfg
	name, err := NodeName()
	if err != nil {
		return nil, err
	}
	dir := KubeletDir(cfg.DataDir)
	cert, err := pki.EnsureClient(filepath.Join(dir, "pki"), "kubelet-client", ca, "system:node:"+name, []string{"system:nodes"}, now)
	if err != nil {
		return nil, fmt.Errorf("kubelet client certificate: %w", err)
	}
	if err := kubeconfig.Write(KubeletKubeconfigPath(cfg.DataDir), kubeconfig.New("skiff", server, ca.CertPEM, cert.CertPEM, cert.KeyPEM)); err != nil {
		return nil, err
	}
	c, err := client.New(&client.Config{Host: server, CAData: ca.CertPEM, CertData: cert.CertPEM, KeyData: cert.KeyPEM,
		QPS: kubeletQPS, Burst: kubeletBurst, UserAgent: "skiff-kubelet"})
	if err != nil {
		return nil, err
	}
	// The simulated runtime. Its network waits for the node's pod CIDR
	// (as a CNI network does) when the in-process controller manager
	// assigns one.
	rt := sim.New(sim.Config{WaitForPodCIDR: !u.disabled["controller-manager"], StopLatency: time.Second, RunDuration: 5 * time.Second})
	var runtime cri.RuntimeService = rt
	plan := &nodePlan{name: name,
		message: fmt.Sprintf("No container runtime found: the node %s runs a simulated runtime (pods are scheduled, get IPs and reach Running, but no container runs; the node is labelled %s=sim).", name, hollow.LabelRuntime)}
	if nodeIP == "" {
		nodeIP = cfg.AdvertiseAddress
	}
	logger := cfg.Logger.With("component", "kubelet")
	plan.run = func(ctx context.Context) error {
		b := record.NewBroadcaster(record.WithContext(ctx), record.WithClock(cfg.Clock), record.WithLogger(logger))
		b.StartRecordingToSink(record.NewClientSink(c))
		defer b.Shutdown()
		k, err := kubelet.New(kubelet.Config{Client: c, NodeName: name, Runtime: runtime, Images: rt, Clock: cfg.Clock, Logger: logger,
			NodeLabels: map[string]string{hollow.LabelRuntime: "sim"}, NodeIP: nodeIP,
			Recorder: b.NewRecorder(corev1.EventSource{Component: "kubelet", Host: name}), SimulateHandlers: true})
		if err != nil {
			return err
		}
		return k.Run(ctx)
	}
	return plan, nil
}

// withNodeRestriction adds NodeRestriction to the enabled admission
// plugins (kubeadm enables it) unless it is disabled explicitly.
func withNodeRestriction(enable, disable []string) []string {
	if slices.Contains(enable, "NodeRestriction") || slices.Contains(disable, "NodeRestriction") {
		return enable
	}
	return append(slices.Clone(enable), "NodeRestriction")
}
