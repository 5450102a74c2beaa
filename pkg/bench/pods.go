package bench

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Pod is the benchmark's pod number i in namespace ns: what a Deployment
// of a small web service would create (one container with an image,
// arguments, a named port, an env var from the downward API, requests and
// limits, a readiness probe, a few labels). Deterministic in (ns, i).
func Pod(ns string, i int) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("web-%06d", i),
			Namespace: ns,
			Labels: map[string]string{
				"app.kubernetes.io/name":      "web",
				"app.kubernetes.io/component": "frontend",
				"pod-template-hash":           "7c5ddbdf54",
				"bench.skiff.sh/shard":        fmt.Sprintf("%d", i%16),
			},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/default-container": "web",
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "web",
				Image: "registry.k8s.io/e2e-test-images/agnhost:2.52",
				Args:  []string{"netexec", "--http-port=8080"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"},
				}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
					},
					Limits: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi"),
					},
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
						Path: "/healthz", Port: intstr.FromString("http"),
					}},
					PeriodSeconds: 10,
				},
				ImagePullPolicy: corev1.PullIfNotPresent,
			}},
			RestartPolicy: corev1.RestartPolicyAlways,
		},
	}
}

// podBodies marshals pods [0, n) of namespace ns (outside any timing).
func podBodies(ns string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		b, err := json.Marshal(Pod(ns, i))
		if err != nil {
			panic(err) // a fixed, valid object
		}
		out[i] = b
	}
	return out
}

// ConfigMap is the watch phase's object number j of writer w.
func ConfigMap(ns string, w, j int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: configMapName(w, j), Namespace: ns,
			Labels: map[string]string{"app.kubernetes.io/name": "bench-watch"},
		},
		Data: map[string]string{
			"writer": fmt.Sprintf("%d", w),
			"seq":    fmt.Sprintf("%d", j),
			"config": "log-level=info\nlisten=:8080\nupstream=http://backend.default.svc:80\n",
		},
	}
}

func configMapName(w, j int) string { return fmt.Sprintf("cm-%02d-%06d", w, j) }

const configMapPrefix = "cm-"
