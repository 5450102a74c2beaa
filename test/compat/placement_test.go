package compat

// Placement, skiff's scheduler against upstream's: each scenario (nodes
// with labels, zones, taints, capacity, images; pods already bound; pods
// to place, one after the other) is built on two in-process skiff API
// servers; upstream's kube-scheduler 1.34 runs on one, skiff's on the
// other, both with the same KubeSchedulerConfiguration
// (percentageOfNodesToScore 100, so every feasible node is scored). Both
// say, for every pod they score, each plugin's weighted score and each
// node's total (upstream's -v=10 lines "Plugin scored node for pod" and
// "Calculated node's final score for pod"; skiff's debug lines with the
// same messages). Per pod the scored (feasible) nodes, every plugin's
// score on them, the best-scored nodes and where the pod went must be
// the same; a pod nobody can take must get the same FailedScheduling
// message.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/skiff-sh/skiff/pkg/scheduler"
	"github.com/skiff-sh/skiff/pkg/scheduler/apis/config"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// placementConfig is the KubeSchedulerConfiguration of both schedulers:
// the default profile and two with NodeResourcesFit's other scoring
// strategies (pods pick them by schedulerName).
const placementConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
- schedulerName: most-allocated
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 2}
- schedulerName: requested-to-capacity
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - {name: cpu, weight: 3}
        - {name: memory, weight: 1}
        requestedToCapacityRatio:
          shape:
          - {utilization: 0, score: 0}
          - {utilization: 50, score: 8}
          - {utilization: 100, score: 10}
- schedulerName: custom
  plugins:
    multiPoint:
      enabled:
      - name: NodeResourcesBalancedAllocation
        weight: 3
      - name: ImageLocality
        weight: 2
    score:
      disabled:
      - name: TaintToleration
  pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/fpga]
      ignoredResourceGroups: [ignored.io]
      scoringStrategy:
        type: LeastAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
        - {name: example.com/gpu, weight: 3}
  - name: NodeResourcesBalancedAllocation
    args:
      resources:
      - {name: cpu, weight: 1}
      - {name: memory, weight: 1}
      - {name: example.com/gpu, weight: 1}
  - name: InterPodAffinity
    args:
      hardPodAffinityWeight: 7
      ignorePreferredTermsOfExistingPods: true
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: pool, operator: NotIn, values: [reserved]}
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 20
          preference:
            matchExpressions:
            - {key: disk, operator: In, values: [ssd]}
`

// placementScenario is one cluster and the pods placed on it.
type placementScenario struct {
	name string
	// namespaces besides default, with their labels.
	namespaces map[string]map[string]string
	nodes      []*corev1.Node
	// bound pods are created with spec.nodeName set.
	bound []*corev1.Pod
	// queued pods are created before the scheduler starts (all in its
	// queue at once: PrioritySort decides the order).
	queued []*corev1.Pod
	// terminating names bound pods deleted (gracefully: without a
	// kubelet they stay, terminating) before the scheduler starts.
	terminating []string
	// statuses sets the status of bound pods (by name) before the
	// scheduler starts (a kubelet's report: containers' actual
	// resources, resize conditions).
	statuses map[string]func(*corev1.PodStatus)
	// setup creates other objects (services, disruption budgets) before
	// the scheduler starts.
	setup func(t *testing.T, cs kubernetes.Interface)
	// preemption: after each pod nominated to a node, the pods the
	// scheduler preempted (marked DisruptionTarget and deleted
	// gracefully; without a kubelet they stay terminating) are compared
	// too, as "victims/<pod>".
	preemption bool
	// steps run one after the other once the scheduler runs: a pod is
	// created and its outcome awaited (a gated pod's is "gated"), or a
	// gated pod's gates are removed and its outcome awaited. Unless kept,
	// the pod is then deleted, so that every pod meets the same cluster
	// and a tie broken differently by the two schedulers does not change
	// what later pods meet.
	steps []placementStep
}

type placementStep struct {
	pod    *corev1.Pod
	keep   bool
	ungate string
	// change alters the cluster (an event that may make a waiting pod
	// schedulable); await waits for the named kept pod to be bound
	// (outcome "after/<pod>": its node, or "still pending" after
	// awaitWait).
	change func(t *testing.T, cs kubernetes.Interface)
	await  string
}

// awaitWait bounds an await step: longer than upstream's longest
// back-off (10 s) plus a scheduling cycle.
const awaitWait = 12 * time.Second

// placementResult is what one scheduler did with one pod.
type placementResult struct {
	outcome string // node:<name>, pending:<message>, gated
	// scores of the last scheduling cycle that scored nodes: node →
	// plugin → weighted score, and node → total. Empty when the pod was
	// not scored (one feasible node, or none).
	plugins map[string]map[string]int64
	totals  map[string]int64
}

func (r *placementResult) totalOf(node string) (int64, bool) {
	if r == nil {
		return 0, false
	}
	s, ok := r.totals[node]
	return s, ok
}

// feasible is the set of nodes the pod could go to, as far as the
// scheduler told: the scored nodes, or the one it went to.
func (r *placementResult) feasible() []string {
	if len(r.totals) > 0 {
		return sortedNames(r.totals)
	}
	if n, ok := strings.CutPrefix(r.outcome, "node:"); ok {
		return []string{n}
	}
	return nil
}

// top is the set of best-scored nodes.
func (r *placementResult) top() []string {
	if len(r.totals) == 0 {
		return r.feasible()
	}
	best := int64(-1)
	var out []string
	for n, s := range r.totals {
		switch {
		case s > best:
			best, out = s, []string{n}
		case s == best:
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// scoreLog gathers the score lines of one scheduler, per pod ("ns/name"),
// keeping the last cycle.
type scoreLog struct {
	mu   sync.Mutex
	pods map[string]*placementResult
	// finals marks pods whose current cycle already logged totals: the
	// next plugin line starts a new cycle.
	finals map[string]bool
}

func newScoreLog() *scoreLog {
	return &scoreLog{pods: map[string]*placementResult{}, finals: map[string]bool{}}
}

func (l *scoreLog) add(msg, pod, plugin, node string, score int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.pods[pod]
	switch msg {
	case "Plugin scored node for pod":
		if r == nil || l.finals[pod] {
			r = &placementResult{plugins: map[string]map[string]int64{}, totals: map[string]int64{}}
			l.pods[pod] = r
			l.finals[pod] = false
		}
		if r.plugins[node] == nil {
			r.plugins[node] = map[string]int64{}
		}
		r.plugins[node][plugin] = score
	case "Calculated node's final score for pod":
		if _, seen := r.totalOf(node); r == nil || seen {
			// A new cycle without plugin lines.
			r = &placementResult{plugins: map[string]map[string]int64{}, totals: map[string]int64{}}
			l.pods[pod] = r
		}
		l.finals[pod] = true
		r.totals[node] = score
	}
}

func (l *scoreLog) get(pod string) placementResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.pods[pod]; r != nil {
		return *r
	}
	return placementResult{}
}

// upstreamScoreLine is klog's text form of upstream's two -v=10 lines.
var upstreamScoreLine = regexp.MustCompile(`"(Plugin scored node for pod|Calculated node's final score for pod)" pod="([^"]+)"(?: plugin="([^"]+)")? node="([^"]+)" score=(-?\d+)`)

func parseUpstreamScores(out string) *scoreLog {
	l := newScoreLog()
	for _, m := range upstreamScoreLine.FindAllStringSubmatch(out, -1) {
		s, _ := strconv.ParseInt(m[5], 10, 64)
		l.add(m[1], m[2], m[3], m[4], s)
	}
	return l
}

// scoreHandler is a slog.Handler feeding skiff's debug score lines into a
// scoreLog (everything else is dropped).
type scoreHandler struct{ log *scoreLog }

func (h scoreHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h scoreHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h scoreHandler) WithGroup(string) slog.Handler            { return h }
func (h scoreHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "Plugin scored node for pod" && r.Message != "Calculated node's final score for pod" {
		return nil
	}
	var pod, plugin, node string
	var score int64
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "pod":
			pod = a.Value.String()
		case "plugin":
			plugin = a.Value.String()
		case "node":
			node = a.Value.String()
		case "score":
			score = a.Value.Int64()
		}
		return true
	})
	h.log.add(r.Message, pod, plugin, node, score)
	return nil
}

// placementScheduler is a running scheduler under test.
type placementScheduler struct {
	// forgot waits until the scheduler's cache has dropped a deleted pod
	// (nil: nothing to wait for).
	forgot func(t *testing.T, p *corev1.Pod)
	// stop stops the scheduler and returns its score lines.
	stop func() *scoreLog
}

func TestPlacementMatchesUpstream(t *testing.T) {
	bin := upstreamBinaries(t)
	for _, sc := range append(placementScenarios(), randomPlacementScenarios()...) {
		t.Run(sc.name, func(t *testing.T) {
			upstream := runPlacement(t, sc, func(t *testing.T, env *testenv.Environment) placementScheduler {
				return startUpstreamScheduler(t, bin, env)
			})
			skiff := runPlacement(t, sc, func(t *testing.T, env *testenv.Environment) placementScheduler {
				return startSkiffScheduler(t, env)
			})
			comparePlacements(t, sc, upstream, skiff)
		})
	}
}

func startUpstreamScheduler(t *testing.T, bin string, env *testenv.Environment) placementScheduler {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "scheduler.yaml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(placementConfig, env.KubeconfigPath)), 0o600); err != nil {
		t.Fatal(err)
	}
	vmodule := "schedule_one=10"
	if v := os.Getenv("SKIFF_PLACEMENT_VMODULE"); v != "" {
		vmodule += "," + v
	}
	p := startProc(t, filepath.Join(bin, "kube-scheduler"), "--config", cfgPath,
		"--authentication-kubeconfig", env.KubeconfigPath, "--authorization-kubeconfig", env.KubeconfigPath,
		"--secure-port", strconv.Itoa(freeTCPPort(t)), "--bind-address=127.0.0.1", "--vmodule="+vmodule)
	return placementScheduler{
		// Upstream's cache hears of assigned pods through a handler of its
		// own, concurrent with the one queueing new pods: the next pod may
		// be scheduled before the cache dropped the deleted one. Its cache
		// dump (SIGUSR2) tells when it has.
		forgot: func(t *testing.T, pod *corev1.Pod) {
			t.Helper()
			entry := fmt.Sprintf("name: %s, namespace: %s,", pod.Name, pod.Namespace)
			deadline := time.Now().Add(waitTimeout)
			for time.Now().Before(deadline) {
				seen := strings.Count(p.output(), "Dump of cached NodeInfo")
				if err := p.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
					t.Fatal(err)
				}
				for time.Now().Before(deadline) {
					out := p.output()
					if strings.Count(out, "Dump of cached NodeInfo") > seen {
						dump := out[strings.LastIndex(out, "Dump of cached NodeInfo"):]
						if end := strings.Index(dump, "Dump of scheduling queue"); end >= 0 {
							if !strings.Contains(dump[:end], entry) {
								return
							}
							break
						}
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			t.Fatalf("upstream's cache still has the deleted pod %s", pod.Name)
		},
		stop: func() *scoreLog {
			// Stopped, so that its output is complete.
			p.cmd.Process.Signal(os.Interrupt)
			p.cmd.Wait()
			if dir := os.Getenv("SKIFF_PLACEMENT_LOGS"); dir != "" {
				name := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".log")
				if err := os.WriteFile(name, []byte(p.output()), 0o644); err != nil {
					t.Error(err)
				}
			}
			return parseUpstreamScores(p.output())
		},
	}
}

// startSkiffScheduler runs skiff's scheduler in-process; its debug lines
// feed the score log. (One informer handler feeds both its cache and its
// queue: a deletion is in the cache before the next pod is queued.)
func startSkiffScheduler(t *testing.T, env *testenv.Environment) placementScheduler {
	t.Helper()
	cc, err := config.Decode([]byte(fmt.Sprintf(placementConfig, env.KubeconfigPath)))
	if err != nil {
		t.Fatal(err)
	}
	l := newScoreLog()
	run := scheduler.InProcess(cc, scheduler.Config{Logger: slog.New(scoreHandler{l})})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, env.KubeconfigPath) }()
	var once sync.Once
	var runErr error
	stop := func() { once.Do(func() { cancel(); runErr = <-done }) }
	t.Cleanup(stop)
	return placementScheduler{stop: func() *scoreLog {
		stop()
		if runErr != nil && runErr != context.Canceled {
			t.Errorf("skiff's scheduler: %v", runErr)
		}
		return l
	}}
}

// comparePlacements checks, pod by pod, skiff's result against
// upstream's.
func comparePlacements(t *testing.T, sc placementScenario, upstream, skiff map[string]placementResult) {
	t.Helper()
	kept := map[string]bool{}
	for _, p := range sc.queued {
		kept[podKey(p)] = true
	}
	for _, st := range sc.steps {
		if st.pod != nil && st.keep {
			kept[podKey(st.pod)] = true
		}
	}
	keys := scenarioPodKeys(sc)
	for _, k := range sortedNames(upstream) {
		if strings.HasPrefix(k, "victims/") || strings.HasPrefix(k, "after/") || strings.HasPrefix(k, "events/") {
			keys = append(keys, k)
		}
	}
	for _, pod := range keys {
		u, s := upstream[pod], skiff[pod]
		if kept[pod] && len(u.top()) > 1 {
			t.Errorf("pod %s stays, but its best nodes tie (%v): the schedulers may pick different ones and later pods meet different clusters; change the scenario", pod, u.top())
		}
		if !slices.Equal(u.feasible(), s.feasible()) {
			t.Errorf("pod %s: feasible nodes: skiff %v, upstream %v", pod, s.feasible(), u.feasible())
		}
		uTop, sTop := u.top(), s.top()
		if !slices.Equal(uTop, sTop) {
			t.Errorf("pod %s: best-scored nodes: skiff %v (%v), upstream %v (%v)", pod, sTop, s.totals, uTop, u.totals)
		}
		for _, n := range sortedNames(u.plugins) {
			for _, pl := range sortedNames(u.plugins[n]) {
				if got, ok := s.plugins[n][pl]; !ok || got != u.plugins[n][pl] {
					t.Errorf("pod %s: node %s: plugin %s scored %d by skiff (scored: %v), %d by upstream", pod, n, pl, got, ok, u.plugins[n][pl])
				}
			}
			for _, pl := range sortedNames(s.plugins[n]) {
				if _, ok := u.plugins[n][pl]; !ok {
					t.Errorf("pod %s: node %s: plugin %s scored by skiff (%d), not by upstream", pod, n, pl, s.plugins[n][pl])
				}
			}
		}
		// Where a tie let each scheduler pick at random, the pod may go
		// to different best nodes.
		uo, so := u.outcome, s.outcome
		if len(uTop) > 1 && slices.Equal(uTop, sTop) {
			un, _ := strings.CutPrefix(uo, "node:")
			sn, _ := strings.CutPrefix(so, "node:")
			if slices.Contains(uTop, un) && slices.Contains(sTop, sn) {
				uo, so = "node:one of "+strings.Join(uTop, ","), "node:one of "+strings.Join(sTop, ",")
			}
		}
		if uo != so {
			t.Errorf("pod %s: skiff %q, upstream %q", pod, s.outcome, u.outcome)
		} else {
			t.Logf("pod %s: %s; scores %v", pod, s.outcome, s.totals)
		}
	}
}

// scenarioPodKeys are the "ns/name" of the pods a scenario places.
func scenarioPodKeys(sc placementScenario) []string {
	var out []string
	for _, p := range sc.queued {
		out = append(out, podKey(p))
	}
	for _, st := range sc.steps {
		if st.pod != nil {
			out = append(out, podKey(st.pod))
		}
	}
	return out
}

func podKey(p *corev1.Pod) string {
	ns := p.Namespace
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + p.Name
}

// runPlacement builds the scenario's cluster, starts a scheduler with
// start (which returns how to stop it and get its score lines), runs the
// steps and returns each pod's result.
func runPlacement(t *testing.T, sc placementScenario, start func(*testing.T, *testenv.Environment) placementScheduler) map[string]placementResult {
	t.Helper()
	env := testenv.StartT(t, testenv.Config{})
	ctx := context.Background()
	cs := clientset(t, restConfig(t, env))
	if err := env.EnsureServiceAccount(ctx, "default", "default"); err != nil {
		t.Fatal(err)
	}
	for _, ns := range sortedNames(sc.namespaces) {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: sc.namespaces[ns]}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := env.EnsureServiceAccount(ctx, ns, "default"); err != nil {
			t.Fatal(err)
		}
	}
	never := corev1.PreemptNever
	for _, pc := range []struct {
		name   string
		value  int32
		policy *corev1.PreemptionPolicy
	}{{"low", 10, nil}, {"mid", 20, nil}, {"high", 30, nil}, {"high-never", 30, &never}} {
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc.name}, Value: pc.value, PreemptionPolicy: pc.policy}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range sc.nodes {
		createNode(t, cs, n)
	}
	for _, p := range sc.bound {
		createPod(t, cs, p)
	}
	for _, name := range sortedNames(sc.statuses) {
		i := slices.IndexFunc(sc.bound, func(p *corev1.Pod) bool { return p.Name == name })
		if i < 0 {
			t.Fatalf("status of %s: no such bound pod", name)
		}
		p, err := cs.CoreV1().Pods(sc.bound[i].Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc.statuses[name](&p.Status)
		if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("status of %s: %v", name, err)
		}
	}
	for _, name := range sc.terminating {
		i := slices.IndexFunc(sc.bound, func(p *corev1.Pod) bool { return p.Name == name })
		if i < 0 {
			t.Fatalf("terminating %s: no such bound pod", name)
		}
		p := sc.bound[i]
		if err := cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{}); err != nil || got.DeletionTimestamp == nil {
			t.Fatalf("pod %s should be terminating: %v", p.Name, err)
		}
	}
	if sc.setup != nil {
		sc.setup(t, cs)
	}
	for _, p := range sc.queued {
		createPod(t, cs, p)
	}
	waitWatchCacheFresh(t, cs)
	sched := start(t, env)
	out := map[string]placementResult{}
	deadline := time.Now().Add(upstreamWait)
	for _, p := range sc.queued {
		out[podKey(p)] = placementResult{outcome: placementOutcome(t, cs, p, deadline)}
	}
	var gated []*corev1.Pod
	for _, st := range sc.steps {
		if st.pod != nil {
			createPod(t, cs, st.pod)
			if len(st.pod.Spec.SchedulingGates) > 0 {
				gated = append(gated, st.pod)
				continue
			}
			o := placementOutcome(t, cs, st.pod, deadline)
			out[podKey(st.pod)] = placementResult{outcome: o}
			if sc.preemption {
				out["victims/"+podKey(st.pod)] = placementResult{outcome: preemptionVictims(t, cs, strings.Contains(o, " nominated:"))}
			}
			if !st.keep {
				deletePod(t, cs, st.pod, sched.forgot)
			}
			continue
		}
		if st.change != nil {
			st.change(t, cs)
			continue
		}
		if st.await != "" {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: st.await}}
			o := "still pending"
			for end := time.Now().Add(awaitWait); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if cur := currentOutcome(t, cs, p); strings.HasPrefix(cur, "node:") {
					o = cur
					break
				}
			}
			out["after/"+podKey(p)] = placementResult{outcome: o}
			continue
		}
		i := slices.IndexFunc(gated, func(p *corev1.Pod) bool { return p.Name == st.ungate })
		if i < 0 {
			t.Fatalf("step ungate %s: no such gated pod", st.ungate)
		}
		p := gated[i]
		gated = slices.Delete(gated, i, i+1)
		// The scheduler had its chance: later pods were placed meanwhile.
		if o := currentOutcome(t, cs, p); o != "" {
			out[podKey(p)] = placementResult{outcome: "while gated: " + o}
			continue
		}
		patch := []byte(`{"spec":{"schedulingGates":null}}`)
		if _, err := cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		out[podKey(p)] = placementResult{outcome: placementOutcome(t, cs, p, deadline)}
		deletePod(t, cs, p, sched.forgot)
	}
	for _, p := range gated {
		o := currentOutcome(t, cs, p)
		if o == "" {
			o = "gated"
		}
		out[podKey(p)] = placementResult{outcome: o}
	}
	for k, ev := range schedulingEvents(t, cs, out) {
		out["events/"+k] = placementResult{outcome: ev}
	}
	scores := sched.stop()
	for k, r := range out {
		s := scores.get(k)
		s.outcome = r.outcome
		out[k] = s
	}
	return out
}

func createNode(t *testing.T, cs kubernetes.Interface, want *corev1.Node) {
	t.Helper()
	ctx := context.Background()
	n, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: want.ObjectMeta}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status = *want.Status.DeepCopy()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
	if n, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The taints are the scenario's (no node lifecycle controller here
	// to remove the not-ready one added on create).
	n.Spec = *want.Spec.DeepCopy()
	if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func patchNode(t *testing.T, cs kubernetes.Interface, name, patch string) {
	t.Helper()
	if _, err := cs.CoreV1().Nodes().Patch(context.Background(), name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createPod(t *testing.T, cs kubernetes.Interface, p *corev1.Pod) {
	t.Helper()
	ns := p.Namespace
	if ns == "" {
		ns = "default"
	}
	if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", p.Name, err)
	}
}

// waitWatchCacheFresh waits until lists at resourceVersion "0" (served
// by the API server's watch cache, which may lag behind the writes; an
// informer's first list) show the nodes, pods, disruption budgets and
// services as they are now: else a scheduler starting right away may
// begin with a stale cluster.
func waitWatchCacheFresh(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	type lister func(rv string) (map[string]string, error)
	rvs := func(items int, get func(i int) metav1.Object) map[string]string {
		m := make(map[string]string, items)
		for i := range items {
			o := get(i)
			m[o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
		return m
	}
	for what, list := range map[string]lister{
		"nodes": func(rv string) (map[string]string, error) {
			l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				return nil, err
			}
			return rvs(len(l.Items), func(i int) metav1.Object { return &l.Items[i] }), nil
		},
		"pods": func(rv string) (map[string]string, error) {
			l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				return nil, err
			}
			return rvs(len(l.Items), func(i int) metav1.Object { return &l.Items[i] }), nil
		},
		"poddisruptionbudgets": func(rv string) (map[string]string, error) {
			l, err := cs.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				return nil, err
			}
			return rvs(len(l.Items), func(i int) metav1.Object { return &l.Items[i] }), nil
		},
		"services": func(rv string) (map[string]string, error) {
			l, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				return nil, err
			}
			return rvs(len(l.Items), func(i int) metav1.Object { return &l.Items[i] }), nil
		},
	} {
		want, err := list("")
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the watch cache of "+what+" up to date", func() bool {
			got, err := list("0")
			return err == nil && reflect.DeepEqual(got, want)
		})
	}
}

// deletePod deletes p at once and waits until it is gone: the scheduler
// sees the deletion before the next pod (one watch of pods).
func deletePod(t *testing.T, cs kubernetes.Interface, p *corev1.Pod, forgot func(*testing.T, *corev1.Pod)) {
	t.Helper()
	ctx := context.Background()
	if err := cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pod "+p.Name+" deleted", func() (bool, string) {
		_, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if forgot != nil {
		forgot(t, p)
	}
}

// currentOutcome is where the pod is now: "node:<name>",
// "pending:<message>" once the scheduler said it is unschedulable, or "".
func currentOutcome(t *testing.T, cs kubernetes.Interface, p *corev1.Pod) string {
	t.Helper()
	ns := p.Namespace
	if ns == "" {
		ns = "default"
	}
	got, err := cs.CoreV1().Pods(ns).Get(context.Background(), p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeName != "" {
		return "node:" + got.Spec.NodeName
	}
	for _, c := range got.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			if n := got.Status.NominatedNodeName; n != "" {
				return "pending:" + c.Message + " nominated:" + n
			}
			return "pending:" + c.Message
		}
	}
	return ""
}

// schedulingEvents waits for the scheduler's events about each placed
// or pending pod (Scheduled, FailedScheduling; recorded asynchronously)
// and returns them per pod: type, reason and message, without counts or
// times.
func schedulingEvents(t *testing.T, cs kubernetes.Interface, results map[string]placementResult) map[string]string {
	t.Helper()
	want := map[string]bool{}
	for k, r := range results {
		// A pod that waited for an event was retried as other events
		// came, how often depends on timing: its events are not compared.
		_, awaited := results["after/"+k]
		if strings.Count(k, "/") == 1 && r.outcome != "gated" && r.outcome != "timeout" && !awaited {
			want[k] = true
		}
	}
	out := map[string]string{}
	deadline := time.Now().Add(waitTimeout)
	for {
		evs, err := cs.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]map[string]bool{}
		for _, e := range evs.Items {
			if e.InvolvedObject.Kind != "Pod" || (e.Reason != "Scheduled" && e.Reason != "FailedScheduling") {
				continue
			}
			k := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
			if per[k] == nil {
				per[k] = map[string]bool{}
			}
			// The node is compared with the outcome (a tie may send the
			// pod elsewhere). Upstream records events.k8s.io/v1 Events
			// (action Scheduling/Binding, reportingController, no
			// source), skiff core/v1 ones (source.component): kubectl
			// shows both alike; those fields are not compared.
			msg := e.Message
			if i := strings.LastIndex(msg, " to "); e.Reason == "Scheduled" && i >= 0 {
				msg = msg[:i] + " to <node>"
			}
			per[k][fmt.Sprintf("%s %s: %s", e.Type, e.Reason, msg)] = true
		}
		missing := 0
		for k := range want {
			if len(per[k]) == 0 {
				missing++
				continue
			}
			out[k] = strings.Join(sortedNames(per[k]), " | ")
		}
		if missing == 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// preemptionVictims lists the pods being deleted, with their
// DisruptionTarget condition. When some are expected (a pod was
// nominated), it waits for them, then until the list holds still for
// half a second (upstream deletes victims asynchronously, one call each).
func preemptionVictims(t *testing.T, cs kubernetes.Interface, expect bool) string {
	t.Helper()
	list := func() string {
		pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				continue
			}
			v := p.Namespace + "/" + p.Name
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.DisruptionTarget {
					v += fmt.Sprintf(" (%s %s: %s)", c.Status, c.Reason, c.Message)
				}
			}
			out = append(out, v)
		}
		sort.Strings(out)
		return strings.Join(out, ", ")
	}
	if !expect {
		return list()
	}
	last, since := list(), time.Now()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		cur := list()
		if cur != last {
			last, since = cur, time.Now()
			continue
		}
		if cur != "" && time.Since(since) > 500*time.Millisecond {
			return cur
		}
	}
	return last
}

// placementOutcome waits for the pod to be bound or reported
// unschedulable.
func placementOutcome(t *testing.T, cs kubernetes.Interface, p *corev1.Pod, deadline time.Time) string {
	t.Helper()
	for {
		if o := currentOutcome(t, cs, p); o != "" {
			return o
		}
		if time.Now().After(deadline) {
			return "timeout"
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// --- building the scenarios ---

type nodeOpt func(*corev1.Node)

// pnode is a Ready node with the hostname label, cpu and memory as
// capacity and allocatable, 110 pods.
func pnode(name, cpu, memory string, opts ...nodeOpt) *corev1.Node {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("110")}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func zone(z string) nodeOpt {
	return func(n *corev1.Node) { n.Labels[corev1.LabelTopologyZone] = z }
}

func nodeLabels(kv ...string) nodeOpt {
	return func(n *corev1.Node) {
		for i := 0; i+1 < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
	}
}

func taint(key, value string, effect corev1.TaintEffect) nodeOpt {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func unschedulable() nodeOpt { return func(n *corev1.Node) { n.Spec.Unschedulable = true } }

// allocatable overrides allocatable resources (capacity stays).
func allocatable(name corev1.ResourceName, q string) nodeOpt {
	return func(n *corev1.Node) {
		n.Status.Allocatable[name] = resource.MustParse(q)
		if _, ok := n.Status.Capacity[name]; !ok {
			n.Status.Capacity[name] = resource.MustParse(q)
		}
	}
}

// image adds an image of size MB to the node's status.
func image(sizeMB int64, names ...string) nodeOpt {
	return func(n *corev1.Node) {
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: names, SizeBytes: sizeMB * 1024 * 1024})
	}
}

type podOpt func(*corev1.Pod)

// ppod is a pod in default with one container (image busybox).
func ppod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// boundTo is a pod already on node.
func boundTo(node, name string, opts ...podOpt) *corev1.Pod {
	p := ppod(name, opts...)
	p.Spec.NodeName = node
	return p
}

func inNamespace(ns string) podOpt { return func(p *corev1.Pod) { p.Namespace = ns } }

func podLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

// requests sets the first container's cpu and memory requests ("" leaves
// one out).
func requests(cpu, memory string) podOpt {
	return func(p *corev1.Pod) {
		r := corev1.ResourceList{}
		if cpu != "" {
			r[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if memory != "" {
			r[corev1.ResourceMemory] = resource.MustParse(memory)
		}
		p.Spec.Containers[0].Resources.Requests = r
	}
}

func containerImage(img string) podOpt {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Image = img }
}

// withContainer adds a container (image, cpu request).
func withContainer(img, cpu string) podOpt {
	return func(p *corev1.Pod) {
		c := corev1.Container{Name: fmt.Sprintf("c%d", len(p.Spec.Containers)), Image: img}
		if cpu != "" {
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
}

func hostPort(port int32) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: corev1.ProtocolTCP})
	}
}

func nodeSelector(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Spec.NodeSelector[kv[i]] = kv[i+1]
		}
	}
}

func nodeName(n string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

func schedulerName(n string) podOpt { return func(p *corev1.Pod) { p.Spec.SchedulerName = n } }

func priorityClass(n string) podOpt { return func(p *corev1.Pod) { p.Spec.PriorityClassName = n } }

func gate(n string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: n})
	}
}

func toleration(key, value string, op corev1.TolerationOperator, effect corev1.TaintEffect) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Value: value, Operator: op, Effect: effect})
	}
}

func affinity(f func(*corev1.Affinity)) podOpt {
	return func(p *corev1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &corev1.Affinity{}
		}
		f(p.Spec.Affinity)
	}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

// requiredNodeAffinity: terms ORed, each term's requirements ANDed.
func requiredNodeAffinity(terms ...[]corev1.NodeSelectorRequirement) podOpt {
	return affinity(func(a *corev1.Affinity) {
		ns := &corev1.NodeSelector{}
		for _, t := range terms {
			ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: t})
		}
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{}
		}
		a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = ns
	})
}

func preferredNodeAffinity(weight int32, reqs ...corev1.NodeSelectorRequirement) podOpt {
	return affinity(func(a *corev1.Affinity) {
		if a.NodeAffinity == nil {
			a.NodeAffinity = &corev1.NodeAffinity{}
		}
		a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: reqs}})
	})
}

func labelSelector(kv ...string) *metav1.LabelSelector {
	s := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.MatchLabels[kv[i]] = kv[i+1]
	}
	return s
}

func podTerm(topologyKey string, sel *metav1.LabelSelector) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: sel}
}

func requiredPodAffinity(terms ...corev1.PodAffinityTerm) podOpt {
	return affinity(func(a *corev1.Affinity) {
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, terms...)
	})
}

func preferredPodAffinity(weight int32, term corev1.PodAffinityTerm) podOpt {
	return affinity(func(a *corev1.Affinity) {
		if a.PodAffinity == nil {
			a.PodAffinity = &corev1.PodAffinity{}
		}
		a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: term})
	})
}

func requiredPodAntiAffinity(terms ...corev1.PodAffinityTerm) podOpt {
	return affinity(func(a *corev1.Affinity) {
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, terms...)
	})
}

func preferredPodAntiAffinity(weight int32, term corev1.PodAffinityTerm) podOpt {
	return affinity(func(a *corev1.Affinity) {
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		}
		a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: term})
	})
}

func spread(c corev1.TopologySpreadConstraint) podOpt {
	return func(p *corev1.Pod) { p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c) }
}

func spreadConstraint(maxSkew int32, key string, when corev1.UnsatisfiableConstraintAction, sel *metav1.LabelSelector) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: when, LabelSelector: sel}
}

func step(p *corev1.Pod) placementStep { return placementStep{pod: p} }

// keep is a step whose pod stays (later pods meet it).
func keep(p *corev1.Pod) placementStep { return placementStep{pod: p, keep: true} }

func ungate(name string) placementStep { return placementStep{ungate: name} }

func steps(pods ...*corev1.Pod) []placementStep {
	out := make([]placementStep, len(pods))
	for i, p := range pods {
		out[i] = step(p)
	}
	return out
}

// initContainer adds an init container requesting cpu (a sidecar when
// restartable).
func initContainer(cpu string, sidecar bool) podOpt {
	return func(p *corev1.Pod) {
		c := corev1.Container{Name: fmt.Sprintf("init%d", len(p.Spec.InitContainers)), Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
		if sidecar {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
}

// request adds a request (and, for extended resources, the equal limit)
// to the first container.
func request(name corev1.ResourceName, q string) podOpt {
	return func(p *corev1.Pod) {
		r := &p.Spec.Containers[0].Resources
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		r.Requests[name] = resource.MustParse(q)
		if !strings.Contains(string(name), "/") {
			return
		}
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[name] = resource.MustParse(q)
	}
}

// placementScenarios covers each default plugin but the volume ones
// (volume_scheduling_test.go has those).
func placementScenarios() []placementScenario {
	const (
		hostname = corev1.LabelHostname
		zoneKey  = corev1.LabelTopologyZone
	)
	in, notIn, exists, doesNotExist, gt, lt := corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
		corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt
	noSchedule, preferNo, noExecute := corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute
	doNot, anyway := corev1.DoNotSchedule, corev1.ScheduleAnyway
	resourceNodes := func() []*corev1.Node {
		return []*corev1.Node{pnode("n1", "4", "8Gi"), pnode("n2", "8", "8Gi"), pnode("n3", "2", "16Gi"), pnode("n4", "16", "32Gi")}
	}
	resourceBound := func() []*corev1.Pod {
		return []*corev1.Pod{boundTo("n2", "b1", requests("3", "1Gi")), boundTo("n4", "b2", requests("10", "30Gi"))}
	}
	resourcePods := func(profile string) []placementStep {
		o := schedulerName(profile)
		return steps(
			ppod("p1", o, requests("1", "1Gi")),
			ppod("p2", o, requests("500m", "4Gi")),
			ppod("p3", o), // no requests: scored with the non-zero defaults
			ppod("p4", o, requests("3", "2Gi")),
			ppod("p5", o, requests("", "6Gi")),
			ppod("p6", o, requests("9", "")),
		)
	}
	zoned := func() []*corev1.Node {
		return []*corev1.Node{
			pnode("n1", "4", "8Gi", zone("a")), pnode("n2", "4", "8Gi", zone("a")),
			pnode("n3", "4", "8Gi", zone("b")), pnode("n4", "4", "8Gi", zone("c")),
		}
	}
	return []placementScenario{
		{name: "NodeResourcesFit/LeastAllocated", nodes: resourceNodes(), bound: resourceBound(), steps: resourcePods("default-scheduler")},
		{name: "NodeResourcesFit/MostAllocated", nodes: resourceNodes(), bound: resourceBound(), steps: resourcePods("most-allocated")},
		{name: "NodeResourcesFit/RequestedToCapacityRatio", nodes: resourceNodes(), bound: resourceBound(), steps: resourcePods("requested-to-capacity")},
		{
			name: "NodeResourcesFit/init-sidecar-extended-pods",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi", allocatable("ephemeral-storage", "10Gi")),
				pnode("n2", "4", "8Gi", allocatable("example.com/gpu", "2"), allocatable("ephemeral-storage", "100Gi")),
				pnode("n3", "8", "4Gi", allocatable(corev1.ResourcePods, "1")),
			},
			bound: []*corev1.Pod{boundTo("n3", "b1")},
			steps: steps(
				ppod("init-bigger", requests("1", ""), initContainer("3500m", false)),
				ppod("sidecar", requests("1", ""), initContainer("2", true), initContainer("1", false)),
				ppod("gpu", request("example.com/gpu", "1")),
				ppod("gpu-too-many", request("example.com/gpu", "3")),
				ppod("storage", request("ephemeral-storage", "20Gi")),
				ppod("unknown-resource", request("example.com/fpga", "1")),
				ppod("too-big", requests("5", "9Gi")),
			),
		},
		{
			name: "NodeResourcesBalancedAllocation",
			nodes: []*corev1.Node{
				pnode("n1", "4", "16Gi"), pnode("n2", "8", "8Gi"), pnode("n3", "6", "12Gi"),
			},
			bound: []*corev1.Pod{
				boundTo("n1", "cpu-heavy", requests("3", "1Gi")), boundTo("n2", "mem-heavy", requests("1", "6Gi")),
				boundTo("n3", "even", requests("3", "6Gi")),
			},
			steps: steps(
				ppod("mem", requests("100m", "3Gi")),
				ppod("cpu", requests("2", "256Mi")),
				ppod("both", requests("1", "2Gi")),
				ppod("cpu-only", requests("500m", "")),
			),
		},
		{
			name: "NodeAffinity",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi", zone("a"), nodeLabels("disk", "ssd", "gen", "3")),
				pnode("n2", "4", "8Gi", zone("b"), nodeLabels("disk", "hdd", "gen", "5")),
				pnode("n3", "4", "8Gi", zone("c"), nodeLabels("gen", "1")),
				pnode("n4", "4", "8Gi", zone("c"), nodeLabels("disk", "ssd", "gen", "7", "gpu", "")),
			},
			steps: steps(
				ppod("selector", nodeSelector("disk", "ssd")),
				ppod("in-zones-preferred", requiredNodeAffinity([]corev1.NodeSelectorRequirement{req(zoneKey, in, "b", "c")}),
					preferredNodeAffinity(50, req("disk", exists)), preferredNodeAffinity(30, req("gen", gt, "2"))),
				ppod("not-in", requiredNodeAffinity([]corev1.NodeSelectorRequirement{req("disk", notIn, "ssd")})),
				ppod("does-not-exist", requiredNodeAffinity([]corev1.NodeSelectorRequirement{req("disk", doesNotExist)})),
				ppod("gt-lt", requiredNodeAffinity([]corev1.NodeSelectorRequirement{req("gen", gt, "2"), req("gen", lt, "6")})),
				ppod("terms-ored", requiredNodeAffinity([]corev1.NodeSelectorRequirement{req("gpu", exists)}, []corev1.NodeSelectorRequirement{req("gen", lt, "2")})),
				ppod("selector-and-affinity", nodeSelector("disk", "ssd"), requiredNodeAffinity([]corev1.NodeSelectorRequirement{req(zoneKey, in, "a")})),
				ppod("preferred-only", preferredNodeAffinity(10, req(zoneKey, in, "c")), preferredNodeAffinity(90, req("disk", in, "hdd")),
					preferredNodeAffinity(45, req("gen", gt, "4"))),
				ppod("match-fields", affinity(func(a *corev1.Affinity) {
					a.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", in, "n3")}}}}}
				})),
				ppod("nowhere", nodeSelector("disk", "nvme")),
				ppod("nowhere-affinity", requiredNodeAffinity([]corev1.NodeSelectorRequirement{req(zoneKey, in, "z")})),
			),
		},
		{
			name: "TaintToleration",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi", taint("dedicated", "gpu", noSchedule)),
				pnode("n2", "4", "8Gi", taint("soft", "a", preferNo), taint("softer", "", preferNo)),
				pnode("n3", "4", "8Gi", taint("soft", "b", preferNo)),
				pnode("n4", "4", "8Gi", taint("evict", "yes", noExecute)),
				pnode("n5", "4", "8Gi"),
			},
			steps: steps(
				ppod("none"),
				ppod("gpu", toleration("dedicated", "gpu", corev1.TolerationOpEqual, noSchedule), nodeSelector(hostname, "n1")),
				ppod("gpu-wrong-value", toleration("dedicated", "cpu", corev1.TolerationOpEqual, noSchedule), nodeSelector(hostname, "n1")),
				ppod("soft", toleration("soft", "", corev1.TolerationOpExists, preferNo)),
				ppod("everything", toleration("", "", corev1.TolerationOpExists, "")),
				ppod("evict", toleration("evict", "yes", corev1.TolerationOpEqual, noExecute), toleration("soft", "", corev1.TolerationOpExists, "")),
				ppod("only-tainted", requiredNodeAffinity([]corev1.NodeSelectorRequirement{req(hostname, in, "n1", "n4")})),
			),
		},
		{
			name: "NodePorts-NodeUnschedulable",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi", unschedulable()), pnode("n2", "4", "8Gi"), pnode("n3", "4", "8Gi"),
			},
			bound: []*corev1.Pod{boundTo("n2", "web", hostPort(8080))},
			steps: steps(
				ppod("port-8080", hostPort(8080)),
				ppod("port-8080-again", hostPort(8080)),
				ppod("port-9090", hostPort(9090)),
				ppod("tolerates-unschedulable", toleration(corev1.TaintNodeUnschedulable, "", corev1.TolerationOpExists, noSchedule), hostPort(8080)),
				ppod("only-unschedulable", nodeSelector(hostname, "n1")),
			),
		},
		{
			name: "ImageLocality",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi", image(800, "example.com/app:v1", "example.com/app@sha256:0123"), image(30, "busybox:latest")),
				pnode("n2", "4", "8Gi", image(120, "example.com/sidecar:latest"), image(30, "busybox:latest")),
				pnode("n3", "4", "8Gi", image(2000, "example.com/huge:1")),
				pnode("n4", "4", "8Gi", image(800, "example.com/app:v1")),
			},
			steps: steps(
				ppod("app", containerImage("example.com/app:v1")),
				ppod("app-and-sidecar", containerImage("example.com/app:v1"), withContainer("example.com/sidecar", "")),
				ppod("huge", containerImage("example.com/huge:1")),
				ppod("busybox"),
				ppod("small", containerImage("example.com/sidecar:latest")),
				ppod("unknown", containerImage("example.com/none:1")),
				ppod("init-image", initContainer("100m", false), func(p *corev1.Pod) { p.Spec.InitContainers[0].Image = "example.com/huge:1" }),
				ppod("digest", containerImage("example.com/app@sha256:0123")),
				ppod("untagged", containerImage("example.com/sidecar")),
				ppod("twice", containerImage("example.com/app:v1"), withContainer("example.com/app:v1", "")),
			),
		},
		{
			// Pods being resized in place: a node counts the larger of a
			// container's desired, actual and allocated requests, or, when
			// the resize is infeasible, what the container actually has.
			name: "NodeResourcesFit/in-place-resize",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi"), pnode("n2", "4", "8Gi"), pnode("n3", "4", "8Gi"), pnode("n4", "4", "8Gi"), pnode("n5", "4", "8Gi"),
			},
			bound: []*corev1.Pod{
				boundTo("n1", "grown", requests("1", "1Gi")),
				boundTo("n2", "allocated", requests("1", "1Gi")),
				boundTo("n3", "infeasible", requests("3", "1Gi")),
				boundTo("n4", "sidecar", requests("500m", ""), initContainer("500m", true)),
				boundTo("n5", "no-resources", requests("1", "")),
			},
			statuses: map[string]func(*corev1.PodStatus){
				"grown": func(st *corev1.PodStatus) {
					st.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "busybox", Resources: &corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m")}}}}
				},
				"allocated": func(st *corev1.PodStatus) {
					st.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "busybox",
						AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m")},
						Resources:          &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}
				},
				"infeasible": func(st *corev1.PodStatus) {
					st.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "busybox", Resources: &corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}
					st.Conditions = append(st.Conditions, corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible})
				},
				"sidecar": func(st *corev1.PodStatus) {
					st.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init0", Image: "busybox", Resources: &corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m")}}}}
				},
				"no-resources": func(st *corev1.PodStatus) {
					st.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "busybox",
						AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}
				},
			},
			steps: steps(
				ppod("plain"),
				ppod("two-cpus", requests("2", "")),
				ppod("balanced", requests("1", "2Gi"), schedulerName("custom")),
			),
		},
		{
			// Pods waiting for a cluster event (each plugin's events and
			// queueing hints): each is placed once the event comes.
			name: "requeue-on-events",
			nodes: []*corev1.Node{
				pnode("n1", "2", "8Gi", zone("a")), pnode("n2", "2", "8Gi", zone("b"), taint("wait", "x", noSchedule)),
				pnode("n3", "2", "8Gi", zone("c"), unschedulable()),
			},
			bound: []*corev1.Pod{boundTo("n1", "big", requests("2", ""))},
			steps: []placementStep{
				keep(ppod("needs-friend", requiredPodAffinity(podTerm(zoneKey, labelSelector("app", "late"))))),
				keep(ppod("needs-label", nodeSelector("disk", "ssd"))),
				keep(ppod("needs-room", requests("1500m", ""), nodeSelector(hostname, "n1"))),
				keep(ppod("needs-untaint", nodeSelector(hostname, "n2"))),
				keep(ppod("needs-schedulable", nodeSelector(hostname, "n3"))),
				keep(ppod("needs-node", nodeSelector(hostname, "n4"))),
				{change: func(t *testing.T, cs kubernetes.Interface) {
					createPod(t, cs, boundTo("n1", "late", podLabels("app", "late")))
				}},
				{await: "needs-friend"},
				{change: func(t *testing.T, cs kubernetes.Interface) {
					patchNode(t, cs, "n1", `{"metadata":{"labels":{"disk":"ssd"}}}`)
				}},
				{await: "needs-label"},
				{change: func(t *testing.T, cs kubernetes.Interface) {
					deletePod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "big"}}, nil)
				}},
				{await: "needs-room"},
				{change: func(t *testing.T, cs kubernetes.Interface) { patchNode(t, cs, "n2", `{"spec":{"taints":null}}`) }},
				{await: "needs-untaint"},
				{change: func(t *testing.T, cs kubernetes.Interface) {
					patchNode(t, cs, "n3", `{"spec":{"unschedulable":false}}`)
				}},
				{await: "needs-schedulable"},
				{change: func(t *testing.T, cs kubernetes.Interface) { createNode(t, cs, pnode("n4", "2", "8Gi")) }},
				{await: "needs-node"},
			},
		},
		{
			// Preemption's choice of node: equal highest victim priority,
			// the smaller sum of victim priorities wins (n1); among nodes
			// equal on those, the one whose most important victim started
			// last (n3 over n4, by status.startTime).
			name:       "DefaultPreemption/node-choice",
			preemption: true,
			nodes:      []*corev1.Node{pnode("n1", "4", "8Gi"), pnode("n2", "4", "8Gi")},
			bound: []*corev1.Pod{
				boundTo("n1", "n1-mid", priorityClass("mid"), requests("2", "")), boundTo("n1", "n1-low", priorityClass("low"), requests("2", "")),
				boundTo("n2", "n2-mid-a", priorityClass("mid"), requests("2", "")), boundTo("n2", "n2-mid-b", priorityClass("mid"), requests("2", "")),
			},
			steps: steps(ppod("preemptor", priorityClass("high"), requests("4", ""))),
		},
		{
			name:       "DefaultPreemption/start-time",
			preemption: true,
			nodes:      []*corev1.Node{pnode("n3", "4", "8Gi"), pnode("n4", "4", "8Gi"), pnode("n5", "4", "8Gi")},
			bound: []*corev1.Pod{
				boundTo("n3", "late", priorityClass("low"), requests("3", "")), boundTo("n4", "early", priorityClass("low"), requests("3", "")),
				boundTo("n5", "middle", priorityClass("low"), requests("3", "")),
			},
			statuses: map[string]func(*corev1.PodStatus){
				"late": func(st *corev1.PodStatus) {
					st.StartTime = &metav1.Time{Time: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)}
				},
				"early": func(st *corev1.PodStatus) {
					st.StartTime = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
				},
				"middle": func(st *corev1.PodStatus) {
					st.StartTime = &metav1.Time{Time: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
				},
			},
			steps: steps(ppod("preemptor", priorityClass("high"), requests("2", ""))),
		},
		{
			// Victims on one node: the budget-guarded pods are reprieved
			// first, the more important (then earlier started) first.
			name:       "DefaultPreemption/reprieve-order",
			preemption: true,
			nodes:      []*corev1.Node{pnode("n1", "4", "8Gi")},
			bound: []*corev1.Pod{
				boundTo("n1", "g-1", priorityClass("low"), podLabels("app", "guarded"), requests("1", "")),
				boundTo("n1", "g-2", priorityClass("mid"), podLabels("app", "guarded"), requests("1", "")),
				boundTo("n1", "free-1", priorityClass("low"), requests("1", "")),
				boundTo("n1", "free-2", priorityClass("mid"), requests("1", "")),
			},
			setup: func(t *testing.T, cs kubernetes.Interface) {
				min := intstr.FromInt32(2)
				if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(context.Background(), &policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Name: "guard"}, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min, Selector: labelSelector("app", "guarded")}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			steps: steps(ppod("preemptor", priorityClass("high"), requests("2", ""))),
		},
		{
			// Removing victims would not help: the pod's node selector
			// rules one node out, a taint the other.
			name:       "DefaultPreemption/not-helpful",
			preemption: true,
			nodes:      []*corev1.Node{pnode("n1", "2", "8Gi", nodeLabels("disk", "hdd")), pnode("n2", "2", "8Gi", nodeLabels("disk", "ssd"), taint("t", "x", noSchedule))},
			bound: []*corev1.Pod{
				boundTo("n1", "low-1", priorityClass("low"), requests("2", "")), boundTo("n2", "low-2", priorityClass("low"), requests("2", "")),
			},
			steps: steps(ppod("preemptor", priorityClass("high"), requests("1", ""), nodeSelector("disk", "ssd"))),
		},
		{
			name:  "no-nodes",
			steps: steps(ppod("alone")),
		},
		{
			name: "edge-cases",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi", nodeLabels("rack", "r1"), taint("evict", "x", noExecute)),
				pnode("n2", "4", "8Gi", nodeLabels("rack", "r1"), taint("k", "v", preferNo)),
				pnode("n3", "4", "8Gi", nodeLabels("rack", "r2")),
				pnode("n4", "4", "8Gi"),
			},
			bound: []*corev1.Pod{
				boundTo("n3", "ports", func(p *corev1.Pod) {
					p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, HostIP: "10.0.0.1", Protocol: corev1.ProtocolTCP},
						{ContainerPort: 53, HostPort: 5353, Protocol: corev1.ProtocolUDP}}
				}),
				boundTo("n4", "r-1", podLabels("app", "r"), preferredPodAntiAffinity(70, podTerm(hostname, labelSelector("app", "shy")))),
				boundTo("n3", "r-2", podLabels("app", "r")),
			},
			steps: steps(
				ppod("port-udp", func(p *corev1.Pod) {
					p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolUDP}}
				}, nodeSelector(hostname, "n3")),
				ppod("port-any-ip", hostPort(8080), nodeSelector(hostname, "n3")),
				ppod("port-other-ip", func(p *corev1.Pod) {
					p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, HostIP: "10.0.0.2", Protocol: corev1.ProtocolTCP}}
				}, nodeSelector(hostname, "n3")),
				ppod("port-udp-5353", func(p *corev1.Pod) {
					p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 53, HostPort: 5353, HostIP: "10.0.0.9", Protocol: corev1.ProtocolUDP}}
				}, nodeSelector(hostname, "n3")),
				ppod("tolerate-key-value-any-effect", toleration("evict", "x", corev1.TolerationOpEqual, ""), toleration("k", "v", corev1.TolerationOpEqual, "")),
				ppod("toleration-seconds", func(p *corev1.Pod) {
					p.Spec.Tolerations = []corev1.Toleration{{Key: "evict", Operator: corev1.TolerationOpExists, Effect: noExecute, TolerationSeconds: ptr.To[int64](30)}}
				}),
				ppod("empty-preference", affinity(func(a *corev1.Affinity) {
					a.NodeAffinity = &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 50}}}
				})),
				ppod("shy", podLabels("app", "shy")),
				ppod("rack-spread", podLabels("app", "r"), spread(spreadConstraint(1, "rack", doNot, labelSelector("app", "r")))),
				ppod("rack-spread-anyway", podLabels("app", "r"), spread(spreadConstraint(1, "rack", anyway, labelSelector("app", "r")))),
				ppod("rack-min-domains", podLabels("app", "r"), spread(func() corev1.TopologySpreadConstraint {
					c := spreadConstraint(1, "rack", doNot, labelSelector("app", "r"))
					c.MinDomains = ptr.To[int32](3)
					return c
				}())),
				ppod("rack-taints-honor", podLabels("app", "r"), spread(func() corev1.TopologySpreadConstraint {
					c := spreadConstraint(1, "rack", doNot, labelSelector("app", "r"))
					c.NodeTaintsPolicy = ptr.To(corev1.NodeInclusionPolicyHonor)
					return c
				}())),
				ppod("spread-nil-selector", podLabels("app", "r"), spread(corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "rack", WhenUnsatisfiable: doNot})),
				ppod("anti-affinity-nil-selector", requiredPodAntiAffinity(corev1.PodAffinityTerm{TopologyKey: hostname})),
				ppod("affinity-empty-selector", requiredPodAffinity(corev1.PodAffinityTerm{TopologyKey: "rack", LabelSelector: &metav1.LabelSelector{}})),
			),
		},
		{
			name:  "InterPodAffinity",
			nodes: zoned(),
			bound: []*corev1.Pod{
				boundTo("n1", "web-1", podLabels("app", "web")),
				boundTo("n3", "db-1", podLabels("app", "db"), requiredPodAntiAffinity(podTerm(hostname, labelSelector("app", "cache")))),
				boundTo("n4", "lonely", podLabels("app", "lonely"), requiredPodAffinity(podTerm(zoneKey, labelSelector("app", "friend"))),
					preferredPodAffinity(30, podTerm(hostname, labelSelector("app", "buddy")))),
			},
			steps: steps(
				ppod("with-web", requiredPodAffinity(podTerm(zoneKey, labelSelector("app", "web")))),
				ppod("away-from-web", requiredPodAntiAffinity(podTerm(zoneKey, labelSelector("app", "web")))),
				ppod("cache", podLabels("app", "cache"), nodeSelector(zoneKey, "b")),
				ppod("cache-2", podLabels("app", "cache")),
				ppod("preferences", preferredPodAffinity(80, podTerm(zoneKey, labelSelector("app", "db"))),
					preferredPodAntiAffinity(40, podTerm(hostname, labelSelector("app", "web")))),
				ppod("friend", podLabels("app", "friend")),
				ppod("buddy", podLabels("app", "buddy")),
				ppod("solo-first", podLabels("app", "solo"), requiredPodAffinity(podTerm(zoneKey, labelSelector("app", "solo")))),
				ppod("solo-second", podLabels("app", "solo"), requiredPodAffinity(podTerm(zoneKey, labelSelector("app", "solo")))),
				ppod("affinity-to-nothing", requiredPodAffinity(podTerm(zoneKey, labelSelector("app", "nothing")))),
				ppod("anti-everything", requiredPodAntiAffinity(podTerm(zoneKey, &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}}))),
			),
		},
		{
			name:       "InterPodAffinity/namespaces",
			namespaces: map[string]map[string]string{"team-a": {"team": "a"}, "team-b": {"team": "b"}},
			nodes:      zoned(),
			bound: []*corev1.Pod{
				boundTo("n1", "web-a", inNamespace("team-a"), podLabels("app", "web")),
				boundTo("n3", "web-b", inNamespace("team-b"), podLabels("app", "web")),
				boundTo("n4", "web-default", podLabels("app", "web")),
			},
			steps: steps(
				ppod("selector-team-b", requiredPodAffinity(corev1.PodAffinityTerm{TopologyKey: zoneKey, LabelSelector: labelSelector("app", "web"),
					NamespaceSelector: labelSelector("team", "b")})),
				ppod("namespaces-team-a", requiredPodAffinity(corev1.PodAffinityTerm{TopologyKey: zoneKey, LabelSelector: labelSelector("app", "web"),
					Namespaces: []string{"team-a"}})),
				ppod("all-namespaces-anti", requiredPodAntiAffinity(corev1.PodAffinityTerm{TopologyKey: hostname, LabelSelector: labelSelector("app", "web"),
					NamespaceSelector: &metav1.LabelSelector{}})),
				ppod("own-namespace-anti", requiredPodAntiAffinity(podTerm(zoneKey, labelSelector("app", "web")))),
				ppod("preferred-team-a", inNamespace("team-b"), preferredPodAffinity(60, corev1.PodAffinityTerm{TopologyKey: zoneKey,
					LabelSelector: labelSelector("app", "web"), NamespaceSelector: labelSelector("team", "a")})),
				ppod("selector-nothing", requiredPodAffinity(corev1.PodAffinityTerm{TopologyKey: zoneKey, LabelSelector: labelSelector("app", "web"),
					NamespaceSelector: labelSelector("team", "z")})),
			),
		},
		{
			name:  "PodTopologySpread/DoNotSchedule",
			nodes: append(zoned(), pnode("n5", "4", "8Gi")), // n5 has no zone
			bound: []*corev1.Pod{
				boundTo("n1", "s-1", podLabels("app", "s")), boundTo("n2", "s-2", podLabels("app", "s")),
				boundTo("n3", "s-3", podLabels("app", "s")),
			},
			steps: steps(
				ppod("s-4", podLabels("app", "s"), spread(spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s")))),
				ppod("s-5", podLabels("app", "s"), spread(spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s")))),
				ppod("s-6", podLabels("app", "s"), spread(spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s"))),
					spread(spreadConstraint(1, hostname, doNot, labelSelector("app", "s")))),
				ppod("s-7", podLabels("app", "s"), spread(spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s"))), nodeSelector(zoneKey, "a")),
				ppod("s-8", podLabels("app", "s"), spread(spreadConstraint(2, zoneKey, doNot, labelSelector("app", "s"))), nodeSelector(hostname, "n5")),
				ppod("other", podLabels("app", "other"), spread(spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s")))),
			),
		},
		{
			name:  "PodTopologySpread/ScheduleAnyway",
			nodes: append(zoned(), pnode("n5", "4", "8Gi", zone("c"))),
			bound: []*corev1.Pod{
				boundTo("n1", "s-1", podLabels("app", "s")), boundTo("n1", "s-2", podLabels("app", "s")),
				boundTo("n3", "s-3", podLabels("app", "s")), boundTo("n4", "s-4", podLabels("app", "s")),
			},
			steps: steps(
				ppod("s-5", podLabels("app", "s"), spread(spreadConstraint(1, zoneKey, anyway, labelSelector("app", "s")))),
				ppod("s-6", podLabels("app", "s"), spread(spreadConstraint(1, hostname, anyway, labelSelector("app", "s")))),
				ppod("s-7", podLabels("app", "s"), spread(spreadConstraint(2, zoneKey, anyway, labelSelector("app", "s"))),
					spread(spreadConstraint(1, hostname, anyway, labelSelector("app", "s")))),
				ppod("mixed", podLabels("app", "s"), spread(spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s"))),
					spread(spreadConstraint(1, hostname, anyway, labelSelector("app", "s")))),
			),
		},
		{
			name:  "PodTopologySpread/minDomains-policies",
			nodes: append(zoned()[:3], pnode("n4", "4", "8Gi", zone("c"), taint("dedicated", "x", noSchedule)), pnode("n5", "4", "8Gi", zone("d"), nodeLabels("pool", "other"))),
			bound: []*corev1.Pod{
				boundTo("n1", "s-1", podLabels("app", "s")), boundTo("n3", "s-2", podLabels("app", "s")),
				boundTo("n4", "s-3", podLabels("app", "s")), boundTo("n4", "s-4", podLabels("app", "s")),
				boundTo("n5", "s-5", podLabels("app", "s")), boundTo("n5", "s-6", podLabels("app", "s")),
			},
			steps: steps(
				ppod("min-domains", podLabels("app", "s"), requiredNodeAffinity([]corev1.NodeSelectorRequirement{req(zoneKey, in, "a", "b")}),
					spread(func() corev1.TopologySpreadConstraint {
						c := spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s"))
						c.MinDomains = ptr.To[int32](3)
						return c
					}())),
				ppod("affinity-honor", podLabels("app", "s"), requiredNodeAffinity([]corev1.NodeSelectorRequirement{req("pool", doesNotExist)}),
					spread(spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s")))),
				ppod("affinity-ignore", podLabels("app", "s"), requiredNodeAffinity([]corev1.NodeSelectorRequirement{req("pool", doesNotExist)}),
					spread(func() corev1.TopologySpreadConstraint {
						c := spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s"))
						c.NodeAffinityPolicy = ptr.To(corev1.NodeInclusionPolicyIgnore)
						return c
					}())),
				ppod("taints-honor", podLabels("app", "s"), spread(func() corev1.TopologySpreadConstraint {
					c := spreadConstraint(1, zoneKey, anyway, labelSelector("app", "s"))
					c.NodeTaintsPolicy = ptr.To(corev1.NodeInclusionPolicyHonor)
					return c
				}())),
				ppod("match-label-keys", podLabels("app", "s", "rev", "2"), spread(func() corev1.TopologySpreadConstraint {
					c := spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s"))
					c.MatchLabelKeys = []string{"rev"}
					return c
				}())),
			),
		},
		{
			name:  "SchedulingGates",
			nodes: []*corev1.Node{pnode("n1", "4", "8Gi"), pnode("n2", "2", "4Gi")},
			steps: []placementStep{
				step(ppod("gated", gate("example.com/wait"), requests("1", "1Gi"))),
				step(ppod("free", requests("1", "1Gi"))),
				step(ppod("twice-gated", gate("a"), gate("b"))),
				ungate("gated"),
			},
		},
		{
			// The preemptor needs 3 of a node's 4 cpus: on n1 both low pods
			// go, on n2 only the mid one (the low one is reprieved); the
			// node whose most important victim matters least wins (n1).
			name:       "DefaultPreemption",
			preemption: true,
			nodes:      []*corev1.Node{pnode("n1", "4", "8Gi"), pnode("n2", "4", "8Gi"), pnode("n3", "4", "8Gi")},
			bound: []*corev1.Pod{
				boundTo("n1", "low-1", priorityClass("low"), requests("2", "")), boundTo("n1", "low-2", priorityClass("low"), requests("2", "")),
				boundTo("n2", "mid-1", priorityClass("mid"), requests("3", "")), boundTo("n2", "low-3", priorityClass("low"), requests("1", "")),
				boundTo("n3", "high-1", priorityClass("high"), requests("4", "")),
			},
			steps: steps(ppod("preemptor", priorityClass("high"), requests("3", ""))),
		},
		{
			// As above, but a disruption budget (allowing none) guards the
			// low pods: n2's victim violates no budget and wins.
			name:       "DefaultPreemption/PodDisruptionBudget",
			preemption: true,
			nodes:      []*corev1.Node{pnode("n1", "4", "8Gi"), pnode("n2", "4", "8Gi"), pnode("n3", "4", "8Gi")},
			bound: []*corev1.Pod{
				boundTo("n1", "low-1", priorityClass("low"), podLabels("app", "guarded"), requests("2", "")),
				boundTo("n1", "low-2", priorityClass("low"), podLabels("app", "guarded"), requests("2", "")),
				boundTo("n2", "mid-1", priorityClass("mid"), requests("3", "")), boundTo("n2", "low-3", priorityClass("low"), requests("1", "")),
				boundTo("n3", "high-1", priorityClass("high"), requests("4", "")),
			},
			setup: func(t *testing.T, cs kubernetes.Interface) {
				min := intstr.FromInt32(2)
				if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(context.Background(), &policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Name: "guard"}, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &min, Selector: labelSelector("app", "guarded")}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			steps: steps(ppod("preemptor", priorityClass("high"), requests("3", ""))),
		},
		{
			// No victim helps (all as important as the pod), and a pod
			// that may not preempt.
			name:       "DefaultPreemption/none",
			preemption: true,
			nodes:      []*corev1.Node{pnode("n1", "4", "8Gi"), pnode("n2", "4", "8Gi")},
			bound: []*corev1.Pod{
				boundTo("n1", "high-1", priorityClass("high"), requests("3", "")), boundTo("n2", "low-1", priorityClass("low"), requests("3", "")),
			},
			steps: steps(
				ppod("never", priorityClass("high-never"), requests("3", "")),
				ppod("same-priority", priorityClass("low"), requests("3", "")),
			),
		},
		{
			// The system default spread constraints (hostname maxSkew 3 and
			// zone maxSkew 5, ScheduleAnyway) apply to pods a Service
			// selects.
			name:  "PodTopologySpread/system-defaults",
			nodes: append(zoned(), pnode("n5", "4", "8Gi", zone("c"))),
			bound: []*corev1.Pod{
				boundTo("n1", "svc-1", podLabels("app", "svc")), boundTo("n1", "svc-2", podLabels("app", "svc")),
				boundTo("n1", "svc-3", podLabels("app", "svc")), boundTo("n2", "svc-4", podLabels("app", "svc")),
				boundTo("n2", "svc-5", podLabels("app", "svc")), boundTo("n3", "svc-6", podLabels("app", "svc")),
				boundTo("n4", "svc-7", podLabels("app", "svc")), boundTo("n4", "other", podLabels("app", "other")),
			},
			setup: func(t *testing.T, cs kubernetes.Interface) {
				if _, err := cs.CoreV1().Services("default").Create(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
					Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "svc"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			steps: steps(
				ppod("svc-new", podLabels("app", "svc")),
				ppod("not-selected", podLabels("app", "other")),
				ppod("own-constraint", podLabels("app", "svc"), spread(spreadConstraint(1, hostname, anyway, labelSelector("app", "svc")))),
			),
		},
		{
			// A profile with other weights, a score plugin disabled and
			// every non-volume plugin's args set.
			name: "custom-profile",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi", zone("a"), nodeLabels("disk", "ssd"), allocatable("example.com/gpu", "4"), image(500, "example.com/app:1")),
				pnode("n2", "8", "16Gi", zone("a"), allocatable("example.com/gpu", "2"), taint("soft", "x", preferNo)),
				pnode("n3", "4", "8Gi", zone("b"), nodeLabels("pool", "reserved", "disk", "ssd")),
				pnode("n4", "4", "16Gi", zone("b"), nodeLabels("disk", "hdd"), allocatable("example.com/gpu", "1")),
				pnode("n5", "2", "8Gi", zone("c"), nodeLabels("disk", "ssd"), image(500, "example.com/app:1")),
			},
			bound: []*corev1.Pod{
				boundTo("n1", "gpu-user", podLabels("app", "svc"), requests("1", "2Gi"), request("example.com/gpu", "2")),
				boundTo("n2", "svc-2", podLabels("app", "svc"), requests("2", "1Gi")),
				boundTo("n4", "needs-friend", podLabels("app", "x"), requiredPodAffinity(podTerm(hostname, labelSelector("app", "friend")))),
				boundTo("n5", "likes-friend", podLabels("app", "x"), preferredPodAffinity(100, podTerm(hostname, labelSelector("app", "friend")))),
			},
			setup: func(t *testing.T, cs kubernetes.Interface) {
				if _, err := cs.CoreV1().Services("default").Create(context.Background(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
					Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "svc"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			steps: steps(
				ppod("plain", schedulerName("custom")),
				ppod("gpu", schedulerName("custom"), requests("500m", "1Gi"), request("example.com/gpu", "1")),
				ppod("ignored", schedulerName("custom"), request("example.com/fpga", "3"), request("ignored.io/thing", "1")),
				ppod("friend", schedulerName("custom"), podLabels("app", "friend")),
				ppod("svc", schedulerName("custom"), podLabels("app", "svc"), requests("250m", "")),
				ppod("image", schedulerName("custom"), containerImage("example.com/app:1")),
				ppod("reserved-only", schedulerName("custom"), nodeSelector("pool", "reserved")),
				ppod("not-ignored-elsewhere", request("example.com/fpga", "3")),
			),
		},
		{
			// Pods being deleted: NodeResourcesFit and InterPodAffinity still
			// count them, PodTopologySpread does not.
			name:  "terminating-pods",
			nodes: zoned(),
			bound: []*corev1.Pod{
				boundTo("n1", "big", podLabels("app", "s"), requests("3", "6Gi")),
				boundTo("n3", "s-1", podLabels("app", "s")), boundTo("n3", "s-2", podLabels("app", "s")),
				boundTo("n4", "anti", podLabels("app", "anti"), requiredPodAntiAffinity(podTerm(hostname, labelSelector("app", "s")))),
			},
			terminating: []string{"big", "s-2", "anti"},
			steps: steps(
				ppod("fit", requests("2", "")),
				ppod("spread", podLabels("app", "s"), spread(spreadConstraint(1, zoneKey, doNot, labelSelector("app", "s")))),
				ppod("spread-anyway", podLabels("app", "s"), spread(spreadConstraint(1, hostname, anyway, labelSelector("app", "s")))),
				ppod("affinity", requiredPodAffinity(podTerm(hostname, labelSelector("app", "s")))),
				ppod("preferred", preferredPodAffinity(50, podTerm(zoneKey, labelSelector("app", "s")))),
			),
		},
		{
			// Pod-level requests, overhead, sidecars with memory.
			name: "NodeResourcesFit/pod-level-overhead",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi"), pnode("n2", "3", "16Gi"), pnode("n3", "8", "4Gi"),
			},
			// The overhead comes from a RuntimeClass: the RuntimeClass
			// admission plugin refuses a pod that sets one itself.
			setup: func(t *testing.T, cs kubernetes.Interface) {
				if _, err := cs.NodeV1().RuntimeClasses().Create(context.Background(), &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "with-overhead"},
					Handler: "runc", Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m"), corev1.ResourceMemory: resource.MustParse("3Gi")}}},
					metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			steps: steps(
				ppod("pod-level", requests("500m", "1Gi"), func(p *corev1.Pod) {
					p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m"), corev1.ResourceMemory: resource.MustParse("2Gi")}}
				}),
				ppod("pod-level-only", func(p *corev1.Pod) {
					p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("5Gi")}}
				}),
				ppod("overhead", requests("2500m", "1Gi"), func(p *corev1.Pod) {
					p.Spec.RuntimeClassName = ptr.To("with-overhead")
				}),
				ppod("sidecar-memory", requests("", "1Gi"), func(p *corev1.Pod) {
					p.Spec.InitContainers = []corev1.Container{
						{Name: "side", Image: "busybox", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
							Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}},
						{Name: "init", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("5Gi"), corev1.ResourceCPU: resource.MustParse("3")}}},
					}
				}),
			),
		},
		{
			// The "non-zero" requests scoring counts for containers
			// without cpu or memory requests, on bound pods (per pod in
			// upstream's NodeInfo) and on the pod to place (per container).
			name: "NodeResourcesFit/non-zero-requests",
			nodes: []*corev1.Node{
				pnode("n1", "4", "8Gi"), pnode("n2", "4", "8Gi"), pnode("n3", "4", "8Gi"), pnode("n4", "4", "8Gi"), pnode("n5", "4", "8Gi"),
			},
			bound: []*corev1.Pod{
				boundTo("n1", "half-cpu", requests("1", ""), withContainer("busybox", "")),
				boundTo("n2", "half-both", requests("1", "1Gi"), withContainer("busybox", ""), withContainer("busybox", "")),
				boundTo("n3", "pod-level", requests("", ""), func(p *corev1.Pod) {
					p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
				}),
				boundTo("n4", "none", withContainer("busybox", ""), withContainer("busybox", "")),
				boundTo("n5", "pod-level-named", requests("", "1Gi"), withContainer("busybox", ""), func(p *corev1.Pod) {
					p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
				}),
			},
			steps: steps(
				ppod("plain"),
				ppod("probe-half-cpu", requests("1", ""), withContainer("busybox", "")),
				ppod("most", schedulerName("most-allocated"), requests("1", ""), withContainer("busybox", "")),
				ppod("rtc", schedulerName("requested-to-capacity"), withContainer("busybox", "")),
			),
		},
		{
			// matchLabelKeys / mismatchLabelKeys of pod (anti-)affinity:
			// upstream's API server merges them into the label selector
			// when the pod is created (skiff's API server does not; both
			// schedulers meet the same pods here).
			name:  "InterPodAffinity/matchLabelKeys",
			nodes: zoned(),
			bound: []*corev1.Pod{
				boundTo("n1", "v1", podLabels("app", "web", "rev", "1")), boundTo("n3", "v2", podLabels("app", "web", "rev", "2")),
			},
			steps: steps(
				ppod("match", podLabels("app", "web", "rev", "2"), requiredPodAffinity(corev1.PodAffinityTerm{TopologyKey: zoneKey,
					LabelSelector: labelSelector("app", "web"), MatchLabelKeys: []string{"rev"}})),
				ppod("mismatch", podLabels("app", "web", "rev", "2"), requiredPodAntiAffinity(corev1.PodAffinityTerm{TopologyKey: zoneKey,
					LabelSelector: labelSelector("app", "web"), MismatchLabelKeys: []string{"rev"}})),
			),
		},
		{
			name:  "PrioritySort",
			nodes: []*corev1.Node{pnode("n1", "2", "8Gi")},
			queued: []*corev1.Pod{
				ppod("a-low", priorityClass("low"), requests("1", "")),
				ppod("b-high", priorityClass("high"), requests("1", "")),
				ppod("c-mid", priorityClass("mid"), requests("1", "")),
			},
		},
	}
}
