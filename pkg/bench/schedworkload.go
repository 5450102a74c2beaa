package bench

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The scheduler benchmark's workload follows upstream's scheduler_perf
// (test/integration/scheduler_perf): nodes as templates/node-default.yaml,
// pods as templates/pod-default.yaml (basic shape) or with both
// templates/pod-with-pod-affinity.yaml's required pod affinity and
// templates/pod-with-topology-spreading.yaml's spread constraint
// (affinity shape).

const (
	// Shapes.
	ShapeBasic    = "basic"
	ShapeAffinity = "affinity"

	// boundNamespace holds the pods created already bound (scheduler_perf's
	// init pods live in sched-0), pendingNamespace the measured ones
	// (sched-1), warmupNamespace the pod that tells the scheduler is up.
	boundNamespace   = "sched-0"
	pendingNamespace = "sched-1"
	warmupNamespace  = "sched-warmup"

	zoneLabel     = "topology.kubernetes.io/zone"
	hostnameLabel = "kubernetes.io/hostname"
	// benchZones is how many zones the nodes are spread over (round-robin
	// by index), as scheduler_perf's TopologySpreading labels its nodes
	// with three zones.
	benchZones = 3
)

// benchNodeName is node i's name; nodeIndex parses it back.
func benchNodeName(i int) string { return fmt.Sprintf("node-%05d", i) }

func nodeIndex(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "node-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func zoneName(z int) string { return fmt.Sprintf("zone-%d", z+1) }

// benchPodName is pod i's name (in either namespace); podIndex parses it.
func benchPodName(i int) string { return fmt.Sprintf("pod-%06d", i) }

func podIndex(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "pod-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// SchedNode is node i of the scheduler benchmark: scheduler_perf's
// node-default.yaml (4 CPUs, 32 GiB, 110 pods, Ready, no taints) with a
// hostname label and a zone label (zone-1 … zone-3, round-robin).
func SchedNode(i int) *corev1.Node {
	name := benchNodeName(i)
	capacity := corev1.ResourceList{
		corev1.ResourcePods:   resource.MustParse("110"),
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("32Gi"),
	}
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				hostnameLabel:         name,
				zoneLabel:             zoneName(i % benchZones),
				"kubernetes.io/os":    "linux",
				"kubernetes.io/arch":  "amd64",
				"bench.skiff.sh/perf": "scheduler",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
			Phase:       corev1.NodeRunning,
		},
	}
}

// SchedPod is pod i of namespace ns in the given shape; nodeName binds
// it at creation (the pre-bound pods). Basic: scheduler_perf's
// pod-default.yaml (one pause container, 100m CPU and 500Mi requested and
// limited, container port 80). Affinity: the same pod labelled
// color=blue with a required pod affinity to color=blue pods in the same
// zone (namespaces sched-0 and sched-1, as pod-with-pod-affinity.yaml) and
// a zone spread constraint over color=blue pods with maxSkew 1,
// DoNotSchedule. Every zone holds pre-bound color=blue pods, so the
// affinity is satisfiable everywhere and the spread decides the zone.
func SchedPod(shape, ns string, i int, nodeName string) *corev1.Pod {
	req := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100m"),
		corev1.ResourceMemory: resource.MustParse("500Mi"),
	}
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: benchPodName(i), Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: nodeName,
			Containers: []corev1.Container{{
				Name:      "pause",
				Image:     "registry.k8s.io/pause:3.10.1",
				Ports:     []corev1.ContainerPort{{ContainerPort: 80}},
				Resources: corev1.ResourceRequirements{Requests: req, Limits: req.DeepCopy()},
			}},
		},
	}
	if shape == ShapeAffinity {
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}}
		p.Labels = map[string]string{"color": "blue"}
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: sel,
				TopologyKey:   zoneLabel,
				Namespaces:    []string{pendingNamespace, boundNamespace},
			}},
		}}
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       zoneLabel,
			WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector:     sel.DeepCopy(),
		}}
	}
	return p
}

// schedulerConfigYAML is the KubeSchedulerConfiguration both schedulers
// get: the admin kubeconfig, client throttling as scheduler_perf sets it
// (qps and burst 5000), no leader election; everything else default.
func schedulerConfigYAML(kubeconfig string, qps float64, burst int) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %g
  burst: %d
leaderElection:
  leaderElect: false
`, kubeconfig, qps, burst)
}
