package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client"
)

// kwokStageFiles are the Stages `kwokctl create cluster` gives kwok by
// default (node-initialize, node-heartbeat-with-lease, and the pod "fast"
// stages), relative to kwok's module directory.
var kwokStageFiles = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// kwokModuleVersion is the kwok release ../shared/tools/build-upstream.sh
// builds.
const kwokModuleVersion = "v0.8.0"

// kwokStages returns kwok's default stages as one YAML stream, from the
// Go module cache (where building kwok put its source).
func kwokStages(cfg *KubeletConfig) ([]byte, error) {
	if cfg.KwokStages != "" {
		return os.ReadFile(cfg.KwokStages)
	}
	var dirs []string
	if d := os.Getenv("GOMODCACHE"); d != "" {
		dirs = append(dirs, d)
	}
	if d := os.Getenv("GOPATH"); d != "" {
		dirs = append(dirs, filepath.Join(d, "pkg", "mod"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, "go", "pkg", "mod"))
	}
	for _, d := range dirs {
		mod := filepath.Join(d, "sigs.k8s.io", "kwok@"+kwokModuleVersion)
		var parts []string
		for _, f := range kwokStageFiles {
			b, err := os.ReadFile(filepath.Join(mod, f))
			if err != nil {
				parts = nil
				break
			}
			parts = append(parts, strings.TrimSpace(string(b)))
		}
		if parts != nil {
			return []byte(strings.Join(parts, "\n---\n") + "\n"), nil
		}
	}
	return nil, errors.New("kwok's stages (sigs.k8s.io/kwok@" + kwokModuleVersion + "/kustomize/stage) are not in the Go module cache: pass --kwok-stages FILE")
}

// kwokNode is fake node i as kwok's documentation creates them, with the
// capacity of a hollow node and the pod CIDR hollow node i uses.
func kwokNode(i int) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	name := fmt.Sprintf("kwok-node-%d", i)
	cidr := fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"}},
		Spec:   corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy()},
	}
}

// startKwok creates the nodes and starts kwok managing them; it returns
// kwok's command line.
func startKwok(ctx context.Context, cfg *KubeletConfig, k *kubeletCluster, root string) ([]string, error) {
	stages, err := kwokStages(cfg)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(k.dir, "kwok-stages.yaml")
	if err := os.WriteFile(conf, stages, 0o600); err != nil {
		return nil, err
	}
	nodes := client.For[*corev1.Node, *corev1.NodeList](k.c)
	if err := parallel(ctx, cfg.Nodes, cfg.Clients, func(i int) error {
		n := kwokNode(i)
		status, _ := json.Marshal(map[string]any{"status": map[string]any{"capacity": n.Status.Capacity, "allocatable": n.Status.Allocatable}})
		if _, err := nodes.Create(ctx, n, metav1.CreateOptions{}); err != nil {
			return err
		}
		// (a patch: the controller manager may have changed the node)
		_, err := nodes.Patch(ctx, n.Name, types.MergePatchType, status, metav1.PatchOptions{}, "status")
		return err
	}); err != nil {
		return nil, fmt.Errorf("creating kwok's nodes: %w", err)
	}
	argv := []string{cfg.Kwok, "--kubeconfig=" + k.kubeconfig, "--manage-all-nodes=true", "--config=" + conf,
		"--node-lease-duration-seconds=40"}
	if k.agent, err = startProcess(argv, cfg.Env, filepath.Join(root, "kwok.log"), "kwok"); err != nil {
		return nil, err
	}
	return argv, nil
}
