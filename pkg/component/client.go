package component

import (
	"errors"
	"fmt"
	"os"

	"github.com/skiff-sh/skiff/pkg/client"
)

// LoadClientConfig says how a component reaches the API server, as
// upstream's components decide: a copy of explicit when set; else, with
// neither kubeconfig nor $KUBECONFIG, the pod's service account inside a
// pod; else the kubeconfig file (kubeconfig, $KUBECONFIG or
// ~/.kube/config).
func LoadClientConfig(explicit *client.Config, kubeconfig string) (*client.Config, error) {
	if explicit != nil {
		c := *explicit
		return &c, nil
	}
	if kubeconfig == "" && os.Getenv(client.KubeconfigEnv) == "" {
		c, err := client.InClusterConfig()
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, client.ErrNotInCluster) {
			return nil, err
		}
	}
	c, err := client.LoadKubeconfig(kubeconfig, "")
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return c, nil
}
