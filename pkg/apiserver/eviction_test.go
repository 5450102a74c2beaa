package apiserver_test

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// evictionPod describes the pod a case evicts.
type evictionPod struct {
	phase corev1.PodPhase // "" leaves it Pending
	ready bool
	node  string // bound to this node when set
}

// evictionBudget describes a PodDisruptionBudget; its status is written
// through the status subresource, as the disruption controller would.
type evictionBudget struct {
	name               string
	selector           map[string]any // nil: matchLabels app=<case>
	unhealthyPolicy    string
	disruptionsAllowed int32
	currentHealthy     int32
	desiredHealthy     int32
	observedGeneration int64 // 0: the budget's generation (1)
}

func (b evictionBudget) observed() int64 {
	if b.observedGeneration != 0 {
		return b.observedGeneration
	}
	return 1
}

// pods/eviction: deletes a pod its budget allows to go (201 with a success
// Status), refuses with 429 when the budget is spent, and answers 404 for
// a missing pod, with upstream's messages and causes.
func TestEviction(t *testing.T) {
	c := start(t)
	tests := []struct {
		name     string
		pod      *evictionPod // nil: no pod (evict a missing one)
		budgets  []evictionBudget
		query    string
		eviction map[string]any // overrides the Eviction body's metadata

		wantCode    int
		wantReason  metav1.StatusReason
		wantMsg     string
		wantCause   string // DisruptionBudget cause message on a 429
		wantRetry   int32  // details.retryAfterSeconds on a 429
		wantPodGone bool   // the pod no longer exists afterwards
		check       func(t *testing.T, c *client, ns, pod string)
	}{
		{
			name:     "no budget deletes the pod",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: true},
			wantCode: http.StatusCreated, wantPodGone: true,
		},
		{
			name:     "budget with no disruptions allowed",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: true},
			budgets:  []evictionBudget{{name: "spent", disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2}},
			wantCode: http.StatusTooManyRequests, wantReason: metav1.StatusReasonTooManyRequests,
			wantMsg:   "Cannot evict pod as it would violate the pod's disruption budget.",
			wantCause: "The disruption budget spent needs 2 healthy pods and has 2 currently",
		},
		{
			name:     "budget allowing one disruption",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: true},
			budgets:  []evictionBudget{{name: "one", disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2}},
			wantCode: http.StatusCreated, wantPodGone: true,
			check: func(t *testing.T, c *client, ns, pod string) {
				var pdb policyv1.PodDisruptionBudget
				c.call(http.MethodGet, "/apis/policy/v1/namespaces/"+ns+"/poddisruptionbudgets/one", nil, http.StatusOK, &pdb)
				if pdb.Status.DisruptionsAllowed != 0 {
					t.Errorf("disruptionsAllowed %d after the eviction, want 0", pdb.Status.DisruptionsAllowed)
				}
				if _, ok := pdb.Status.DisruptedPods[pod]; !ok {
					t.Errorf("disruptedPods %v, want %s recorded", pdb.Status.DisruptedPods, pod)
				}
				cond := apimeta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
				if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != policyv1.InsufficientPodsReason {
					t.Errorf("conditions %+v, want DisruptionAllowed False InsufficientPods", pdb.Status.Conditions)
				}
			},
		},
		{
			name:     "missing pod",
			wantCode: http.StatusNotFound, wantReason: metav1.StatusReasonNotFound,
			wantMsg: `pods "victim" not found`,
		},
		{
			name:     "budget not yet observed",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: true},
			budgets:  []evictionBudget{{name: "stale", disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, observedGeneration: -1}},
			wantCode: http.StatusTooManyRequests, wantReason: metav1.StatusReasonTooManyRequests,
			wantMsg:   "Cannot evict pod as it would violate the pod's disruption budget.",
			wantCause: "The disruption budget stale is still being processed by the server.", wantRetry: 10,
		},
		{
			name:     "an empty selector covers every pod",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: true},
			budgets:  []evictionBudget{{name: "all", selector: map[string]any{}, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1}},
			wantCode: http.StatusTooManyRequests, wantReason: metav1.StatusReasonTooManyRequests,
			wantMsg:   "Cannot evict pod as it would violate the pod's disruption budget.",
			wantCause: "The disruption budget all needs 1 healthy pods and has 1 currently",
		},
		{
			name:     "a budget selecting other pods does not apply",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: true},
			budgets:  []evictionBudget{{name: "others", selector: map[string]any{"matchLabels": map[string]any{"app": "else"}}}},
			wantCode: http.StatusCreated, wantPodGone: true,
		},
		{
			name:     "pending pod ignores its budget",
			pod:      &evictionPod{},
			budgets:  []evictionBudget{{name: "spent", disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2}},
			wantCode: http.StatusCreated, wantPodGone: true,
		},
		{
			name:     "unready pod with AlwaysAllow",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: false},
			budgets:  []evictionBudget{{name: "lenient", unhealthyPolicy: "AlwaysAllow", disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2}},
			wantCode: http.StatusCreated, wantPodGone: true,
			check: func(t *testing.T, c *client, ns, pod string) {
				var pdb policyv1.PodDisruptionBudget
				c.call(http.MethodGet, "/apis/policy/v1/namespaces/"+ns+"/poddisruptionbudgets/lenient", nil, http.StatusOK, &pdb)
				if pdb.Status.DisruptionsAllowed != 0 || len(pdb.Status.DisruptedPods) != 0 {
					t.Errorf("budget status %+v, want it untouched", pdb.Status)
				}
			},
		},
		{
			name:     "unready pod of a disrupted application",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: false},
			budgets:  []evictionBudget{{name: "strict", disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2}},
			wantCode: http.StatusTooManyRequests, wantReason: metav1.StatusReasonTooManyRequests,
			wantMsg:   "Cannot evict pod as it would violate the pod's disruption budget.",
			wantCause: "The disruption budget strict needs 2 healthy pods and has 1 currently",
		},
		{
			name:     "dry run keeps pod and budget",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: true},
			budgets:  []evictionBudget{{name: "one", disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2}},
			query:    "?dryRun=All",
			wantCode: http.StatusCreated,
			check: func(t *testing.T, c *client, ns, pod string) {
				var pdb policyv1.PodDisruptionBudget
				c.call(http.MethodGet, "/apis/policy/v1/namespaces/"+ns+"/poddisruptionbudgets/one", nil, http.StatusOK, &pdb)
				if pdb.Status.DisruptionsAllowed != 1 || len(pdb.Status.DisruptedPods) != 0 {
					t.Errorf("budget status %+v after a dry run, want it untouched", pdb.Status)
				}
			},
		},
		{
			name:     "a running pod on a node is marked and deleted gracefully",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: true, node: "node-1"},
			wantCode: http.StatusCreated,
			check: func(t *testing.T, c *client, ns, pod string) {
				var p corev1.Pod
				c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/"+pod, nil, http.StatusOK, &p)
				if p.DeletionTimestamp == nil {
					t.Errorf("pod not being deleted")
				}
				found := false
				for _, cond := range p.Status.Conditions {
					if cond.Type == corev1.DisruptionTarget && cond.Status == corev1.ConditionTrue &&
						cond.Reason == "EvictionByEvictionAPI" && cond.Message == "Eviction API: evicting" {
						found = true
					}
				}
				if !found {
					t.Errorf("conditions %+v, want DisruptionTarget True EvictionByEvictionAPI", p.Status.Conditions)
				}
			},
		},
		{
			name: "two budgets",
			pod:  &evictionPod{phase: corev1.PodRunning, ready: true},
			budgets: []evictionBudget{
				{name: "first", disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2},
				{name: "second", disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2},
			},
			// Upstream answers 201 with the failure Status as the result.
			wantCode: http.StatusCreated,
			check: func(t *testing.T, c *client, ns, pod string) {
				c.call(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/"+pod, nil, http.StatusOK, nil)
			},
		},
		{
			name:     "name mismatch",
			pod:      &evictionPod{phase: corev1.PodRunning, ready: true},
			eviction: map[string]any{"name": "someone-else"},
			wantCode: http.StatusBadRequest, wantReason: metav1.StatusReasonBadRequest,
			wantMsg: "name in URL does not match name in Eviction object",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := c.on(t)
			// A namespace per case: budgets select pods namespace-wide.
			ns := c.namespace("evict-" + string(rune('a'+i)))
			const name = "victim"
			pods := "/api/v1/namespaces/" + ns + "/pods"
			if tt.pod != nil {
				body := pod(name, "nginx:1.27")
				body["metadata"].(map[string]any)["labels"] = map[string]any{"app": "victim"}
				c.call(http.MethodPost, pods, body, http.StatusCreated, nil)
				if tt.pod.node != "" {
					bindPod(c, ns, name, tt.pod.node)
				}
				if tt.pod.phase != "" {
					ready := "False"
					if tt.pod.ready {
						ready = "True"
					}
					code, data := c.patch(pods+"/"+name+"/status", "application/merge-patch+json", map[string]any{
						"status": map[string]any{"phase": tt.pod.phase, "conditions": []any{map[string]any{"type": "Ready", "status": ready}}},
					})
					if code != http.StatusOK {
						t.Fatalf("setting pod status: %d %s", code, data)
					}
				}
			}
			for _, b := range tt.budgets {
				sel := b.selector
				if sel == nil {
					sel = map[string]any{"matchLabels": map[string]any{"app": "victim"}}
				}
				spec := map[string]any{"minAvailable": 1, "selector": sel}
				if b.unhealthyPolicy != "" {
					spec["unhealthyPodEvictionPolicy"] = b.unhealthyPolicy
				}
				pdbs := "/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets"
				c.call(http.MethodPost, pdbs, map[string]any{
					"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": map[string]any{"name": b.name}, "spec": spec,
				}, http.StatusCreated, nil)
				observed := b.observed()
				if observed < 0 {
					observed = 0
				}
				code, data := c.patch(pdbs+"/"+b.name+"/status", "application/merge-patch+json", map[string]any{"status": map[string]any{
					"observedGeneration": observed, "disruptionsAllowed": b.disruptionsAllowed,
					"currentHealthy": b.currentHealthy, "desiredHealthy": b.desiredHealthy, "expectedPods": b.currentHealthy,
				}})
				if code != http.StatusOK {
					t.Fatalf("setting budget status: %d %s", code, data)
				}
			}

			md := map[string]any{"name": name, "namespace": ns}
			for k, v := range tt.eviction {
				md[k] = v
			}
			code, hdr, data := c.do(http.MethodPost, pods+"/"+name+"/eviction"+tt.query,
				map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": md}, "", "")
			switch {
			case tt.wantCode == http.StatusCreated && tt.name == "two budgets":
				if code != http.StatusCreated {
					t.Fatalf("status %d, want 201: %s", code, data)
				}
				st := decodeStatus(t, data)
				if st.Status != metav1.StatusFailure || st.Code != http.StatusInternalServerError ||
					st.Message != "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support." {
					t.Errorf("status %+v, want the Failure for several budgets", st)
				}
			case tt.wantCode == http.StatusCreated:
				if code != http.StatusCreated {
					t.Fatalf("status %d, want 201: %s", code, data)
				}
				st := decodeStatus(t, data)
				if st.Status != metav1.StatusSuccess || st.Code != http.StatusCreated {
					t.Errorf("status %+v, want Success 201", st)
				}
			default:
				st := expectStatus(t, code, data, tt.wantCode, tt.wantReason, tt.wantMsg)
				if tt.wantCode == http.StatusTooManyRequests {
					if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != policyv1.DisruptionBudgetCause ||
						st.Details.Causes[0].Message != tt.wantCause {
						t.Errorf("details %+v, want one DisruptionBudget cause %q", st.Details, tt.wantCause)
					}
					if st.Details != nil && st.Details.RetryAfterSeconds != tt.wantRetry {
						t.Errorf("retryAfterSeconds %d, want %d", st.Details.RetryAfterSeconds, tt.wantRetry)
					}
					if want := map[bool]string{true: "10", false: ""}[tt.wantRetry == 10]; hdr.Get("Retry-After") != want {
						t.Errorf("Retry-After %q, want %q", hdr.Get("Retry-After"), want)
					}
				}
			}

			if tt.pod != nil {
				code, _, data := c.do(http.MethodGet, pods+"/"+name, nil, "", "")
				if gone := code == http.StatusNotFound; gone != tt.wantPodGone {
					t.Errorf("pod gone = %v (GET %d), want %v: %s", gone, code, tt.wantPodGone, data)
				}
			}
			if tt.check != nil {
				tt.check(t, c, ns, name)
			}
		})
	}
}
