package compat

// Random placement scenarios: seeded, so a failure names its seed and
// replays. Each mixes what the per-plugin scenarios of placement_test.go
// test one at a time: nodes of several sizes, zones, labels, taints and
// images; bound pods with labels, ports and (anti-)affinity; pods to
// place with any combination of requests, node selectors and affinity,
// tolerations, pod (anti-)affinity, spread constraints, images, ports and
// the three profiles. Every pod meets the same cluster (it is deleted
// after it is placed), so ties broken differently do not cascade.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// randomPlacementSeeds are the seeds TestPlacementMatchesUpstream runs.
var randomPlacementSeeds = seedsFromEnv([]uint64{1, 2, 3, 4})

func randomPlacementScenarios() []placementScenario {
	var out []placementScenario
	for _, seed := range randomPlacementSeeds {
		out = append(out, randomPlacementScenario(seed))
	}
	return out
}

type randomImage struct {
	name string
	mb   int64
}

var randomImages = []randomImage{{"example.com/a:1", 300}, {"example.com/b:1", 50}, {"example.com/c:1", 900}, {"example.com/d:1", 1500}, {"busybox:latest", 5}}

func randomPlacementScenario(seed uint64) placementScenario {
	r := rand.New(rand.NewPCG(seed, 0x5c1ff))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	chance := func(p float64) bool { return r.Float64() < p }
	apps := []string{"web", "db", "cache", "batch"}
	zones := []string{"a", "b", "c"}
	topo := func() string { return pick(corev1.LabelTopologyZone, corev1.LabelHostname) }

	sc := placementScenario{name: fmt.Sprintf("random/seed-%d", seed), namespaces: map[string]map[string]string{"other": {"team": "other"}}}
	numNodes := 6 + r.IntN(5)
	if n, err := strconv.Atoi(os.Getenv("SKIFF_PLACEMENT_NODES")); err == nil && n > 0 {
		numNodes = n + r.IntN(5)
	}
	for i := range numNodes {
		var opts []nodeOpt
		if !chance(0.1) {
			opts = append(opts, zone(zones[r.IntN(len(zones))]))
		}
		opts = append(opts, nodeLabels("disk", pick("ssd", "hdd"), "gen", strconv.Itoa(1+r.IntN(9))))
		if chance(0.25) {
			opts = append(opts, taint("soft", pick("x", "y"), corev1.TaintEffectPreferNoSchedule))
		}
		if chance(0.15) {
			opts = append(opts, taint("dedicated", "x", corev1.TaintEffectNoSchedule))
		}
		if chance(0.07) {
			opts = append(opts, unschedulable())
		}
		if chance(0.15) {
			opts = append(opts, allocatable(corev1.ResourcePods, strconv.Itoa(2+r.IntN(3))))
		}
		for _, img := range randomImages {
			if chance(0.3) {
				opts = append(opts, image(img.mb, img.name))
			}
		}
		sc.nodes = append(sc.nodes, pnode(fmt.Sprintf("n%02d", i), pick("2", "4", "8", "16"), pick("4Gi", "8Gi", "16Gi", "32Gi"), opts...))
	}
	reqs := func() podOpt {
		return requests(pick("", "100m", "250m", "500m", "1", "2", "3"), pick("", "128Mi", "512Mi", "1Gi", "2Gi", "4Gi"))
	}
	term := func() corev1.PodAffinityTerm {
		t := podTerm(topo(), labelSelector("app", apps[r.IntN(len(apps))]))
		if chance(0.2) {
			t.NamespaceSelector = &metav1.LabelSelector{}
		}
		return t
	}
	for i := range 10 + r.IntN(10) + 2*numNodes {
		n := sc.nodes[r.IntN(len(sc.nodes))]
		opts := []podOpt{podLabels("app", apps[r.IntN(len(apps))]), reqs()}
		if chance(0.2) {
			opts = append(opts, inNamespace("other"))
		}
		if chance(0.1) {
			opts = append(opts, hostPort(int32(8080+r.IntN(2))))
		}
		if chance(0.15) {
			opts = append(opts, requiredPodAntiAffinity(term()))
		}
		if chance(0.2) {
			opts = append(opts, preferredPodAffinity(int32(1+r.IntN(100)), term()))
		}
		if chance(0.2) {
			opts = append(opts, preferredPodAntiAffinity(int32(1+r.IntN(100)), term()))
		}
		sc.bound = append(sc.bound, boundTo(n.Name, fmt.Sprintf("b%02d", i), opts...))
	}
	for i := range 15 {
		opts := []podOpt{podLabels("app", apps[r.IntN(len(apps))]), reqs()}
		if chance(0.3) {
			opts = append(opts, schedulerName(pick("most-allocated", "requested-to-capacity")))
		}
		if chance(0.15) {
			opts = append(opts, nodeSelector("disk", pick("ssd", "hdd")))
		}
		if chance(0.2) {
			opts = append(opts, requiredNodeAffinity([]corev1.NodeSelectorRequirement{req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, pick("a", "b"), pick("b", "c"))}))
		}
		for range r.IntN(3) {
			opts = append(opts, preferredNodeAffinity(int32(1+r.IntN(100)), req("gen", corev1.NodeSelectorOperator(pick("Gt", "Lt")), strconv.Itoa(1+r.IntN(8)))))
		}
		if chance(0.3) {
			opts = append(opts, toleration("soft", "", corev1.TolerationOpExists, corev1.TaintEffectPreferNoSchedule))
		}
		if chance(0.2) {
			opts = append(opts, toleration("dedicated", "x", corev1.TolerationOpEqual, corev1.TaintEffectNoSchedule))
		}
		if chance(0.15) {
			opts = append(opts, requiredPodAffinity(term()))
		}
		if chance(0.15) {
			opts = append(opts, requiredPodAntiAffinity(term()))
		}
		for range r.IntN(3) {
			if chance(0.5) {
				opts = append(opts, preferredPodAffinity(int32(1+r.IntN(100)), term()))
			} else {
				opts = append(opts, preferredPodAntiAffinity(int32(1+r.IntN(100)), term()))
			}
		}
		seen := map[string]bool{} // (key, when) must not repeat
		for range r.IntN(3) {
			when := corev1.ScheduleAnyway
			if chance(0.4) {
				when = corev1.DoNotSchedule
			}
			key := topo()
			if seen[key+string(when)] {
				continue
			}
			seen[key+string(when)] = true
			c := spreadConstraint(int32(1+r.IntN(3)), key, when, labelSelector("app", apps[r.IntN(len(apps))]))
			if when == corev1.DoNotSchedule && chance(0.3) {
				c.MinDomains = ptr.To(int32(1 + r.IntN(4)))
			}
			if chance(0.2) {
				c.NodeAffinityPolicy = ptr.To(corev1.NodeInclusionPolicyIgnore)
			}
			if chance(0.3) {
				c.NodeTaintsPolicy = ptr.To(corev1.NodeInclusionPolicyHonor)
			}
			opts = append(opts, spread(c))
		}
		if chance(0.5) {
			img := randomImages[r.IntN(len(randomImages))]
			opts = append(opts, containerImage(img.name))
			if chance(0.3) {
				opts = append(opts, withContainer(randomImages[r.IntN(len(randomImages))].name, ""))
			}
		}
		if chance(0.1) {
			opts = append(opts, hostPort(int32(8080+r.IntN(2))))
		}
		if chance(0.1) {
			opts = append(opts, initContainer(pick("100m", "1", "3"), chance(0.5)))
		}
		if chance(0.1) {
			opts = append(opts, func(p *corev1.Pod) {
				p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(pick("1", "2", "4"))}}
			})
		}
		if chance(0.05) {
			opts = append(opts, toleration("", "", corev1.TolerationOpExists, ""))
		}
		if chance(0.1) {
			opts = append(opts, inNamespace("other"))
		}
		sc.steps = append(sc.steps, step(ppod(fmt.Sprintf("p%02d", i), opts...)))
	}
	return sc
}

// seedsFromEnv: SKIFF_PLACEMENT_SEEDS=N runs seeds 1..N instead of def
// (SKIFF_PLACEMENT_NODES=N makes their clusters N to N+4 nodes).
func seedsFromEnv(def []uint64) []uint64 {
	n, err := strconv.Atoi(os.Getenv("SKIFF_PLACEMENT_SEEDS"))
	if err != nil || n <= 0 {
		return def
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}
