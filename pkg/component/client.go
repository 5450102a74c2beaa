package component

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/skiff-sh/skiff/pkg/client"
	"github.com/skiff-sh/skiff/pkg/clock"
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

// ClientConnection is how a component talks to the API server: upstream's
// --kubeconfig, --kube-api-qps, --kube-api-burst and
// --kube-api-content-type (a component configuration's clientConnection).
type ClientConnection struct {
	Kubeconfig string
	// QPS and Burst are the client-side rate limit; a negative QPS turns
	// it off.
	QPS         float32
	Burst       int
	ContentType string
}

// UserAgent is a component's User-Agent (and field manager): the
// component's name, skiff's version, "(skiff)".
func UserAgent(component string) string { return component + "/v0.0.0 (skiff)" }

// NewClientConfig is the client configuration of a component: explicit
// or loaded as LoadClientConfig does, with c's rate limit and content
// type, and userAgent, clk and logger where it has none.
func (c ClientConnection) NewClientConfig(explicit *client.Config, userAgent string, clk clock.Clock, logger *slog.Logger) (*client.Config, error) {
	cc, err := LoadClientConfig(explicit, c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cc.QPS, cc.Burst, cc.ContentType = c.QPS, c.Burst, c.ContentType
	if cc.UserAgent == "" {
		cc.UserAgent = userAgent
	}
	if cc.Clock == nil {
		cc.Clock = clk
	}
	if cc.Logger == nil {
		cc.Logger = logger
	}
	return cc, nil
}
