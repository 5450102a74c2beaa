package podautoscaler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skiff-sh/skiff/pkg/client"
)

// PodMetric is one pod's usage of a resource, in milli-units, as the
// metrics source sampled it over Window ending at Timestamp.
type PodMetric struct {
	Timestamp time.Time
	Window    time.Duration
	Value     int64
}

// PodMetricsInfo is the usage of the pods by name.
type PodMetricsInfo map[string]PodMetric

// MetricsClient reads the resource metrics of pods (upstream's
// metricsclient.MetricsClient, resource metrics only).
type MetricsClient interface {
	// GetResourceMetric returns the usage of resource by the pods of
	// namespace that selector selects (by container when container is
	// set) and the time of the sample.
	GetResourceMetric(ctx context.Context, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetricsInfo, time.Time, error)
}

// RESTMetricsClient reads metrics.k8s.io/v1beta1 PodMetrics from the API
// server (an aggregated metrics server behind it), as upstream's resource
// metrics client; without one it answers upstream's error for a cluster
// without a metrics server.
type RESTMetricsClient struct{ Client *client.Client }

// podMetrics and containerMetrics are metrics.k8s.io/v1beta1's PodMetrics
// (k8s.io/metrics is not a dependency of skiff).
type podMetrics struct {
	metav1.ObjectMeta `json:"metadata"`
	Timestamp         metav1.Time        `json:"timestamp"`
	Window            metav1.Duration    `json:"window"`
	Containers        []containerMetrics `json:"containers"`
}

type containerMetrics struct {
	Name  string              `json:"name"`
	Usage corev1.ResourceList `json:"usage"`
}

type podMetricsList struct {
	Items []podMetrics `json:"items"`
}

// GetResourceMetric implements MetricsClient.
func (m RESTMetricsClient) GetResourceMetric(ctx context.Context, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (PodMetricsInfo, time.Time, error) {
	q := url.Values{}
	if s := selector.String(); s != "" {
		q.Set("labelSelector", s)
	}
	resp, err := m.Client.Do(ctx, &client.Request{Method: http.MethodGet, Path: "/apis/metrics.k8s.io/v1beta1/namespaces/" + namespace + "/pods", Query: q, JSONOnly: true})
	if err != nil {
		if apierrors.IsNotFound(err) {
			// What client-go says of a 404 from a group that is not served.
			err = fmt.Errorf("the server could not find the requested resource (get pods.metrics.k8s.io)")
		}
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %v", err)
	}
	var l podMetricsList
	if err := json.Unmarshal(resp.Body, &l); err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %v", err)
	}
	if len(l.Items) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from resource metrics API")
	}
	res := PodMetricsInfo{}
	for _, p := range l.Items {
		var sum int64
		found := false
		missing := len(p.Containers) == 0
		for _, c := range p.Containers {
			if container != "" && c.Name != container {
				continue
			}
			v, ok := c.Usage[resource]
			if !ok {
				missing = true
				break
			}
			found = true
			sum += v.MilliValue()
		}
		if container != "" && !found {
			return nil, time.Time{}, fmt.Errorf("failed to get container metrics: container %s not present in metrics for pod %s/%s", container, p.Namespace, p.Name)
		}
		if !missing {
			res[p.Name] = PodMetric{Timestamp: p.Timestamp.Time, Window: p.Window.Duration, Value: sum}
		}
	}
	return res, l.Items[0].Timestamp.Time, nil
}
