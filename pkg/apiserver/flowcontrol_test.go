package apiserver_test

import (
	"net/http"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// Upstream's mandatory and suggested APF objects exist at start; the
// mandatory ones' specs are fixed, the exempt level's spec.exempt may be
// tuned, and new objects get upstream's defaults.
func TestFlowControlBootstrap(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	c := start(t, testenv.Config{Clock: fake})
	const base = "/apis/flowcontrol.apiserver.k8s.io/v1/"
	var fss flowcontrolv1.FlowSchemaList
	c.call(http.MethodGet, base+"flowschemas", nil, http.StatusOK, &fss)
	if len(fss.Items) != 13 {
		t.Errorf("%d flow schemas, want 13", len(fss.Items))
	}
	var pls flowcontrolv1.PriorityLevelConfigurationList
	c.call(http.MethodGet, base+"prioritylevelconfigurations", nil, http.StatusOK, &pls)
	if len(pls.Items) != 8 {
		t.Errorf("%d priority levels, want 8", len(pls.Items))
	}
	for _, fs := range fss.Items {
		if fs.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" || fs.Generation != 1 {
			t.Errorf("%s: annotations %v generation %d", fs.Name, fs.Annotations, fs.Generation)
		}
		if len(fs.Status.Conditions) != 1 || fs.Status.Conditions[0].Type != "Dangling" || fs.Status.Conditions[0].Status != "False" {
			t.Errorf("%s: status %+v", fs.Name, fs.Status)
		}
	}

	// Requests carry the matched schema and level in upstream's headers.
	uids := map[string]string{}
	for _, fs := range fss.Items {
		uids["fs/"+fs.Name] = string(fs.UID)
	}
	for _, pl := range pls.Items {
		uids["pl/"+pl.Name] = string(pl.UID)
	}
	for _, tc := range []struct{ path, fs, pl string }{
		{"/api/v1/namespaces", "exempt", "exempt"}, // the test client is in system:masters
		// A probe is classified by who sends it, as upstream: the
		// system:masters client matches "exempt" (precedence 1) before
		// "probes" (precedence 2, for everyone else).
		{"/readyz", "exempt", "exempt"},
	} {
		_, h, _ := c.do(http.MethodGet, tc.path, nil, "", "")
		if h.Get("X-Kubernetes-PF-FlowSchema-UID") != uids["fs/"+tc.fs] || h.Get("X-Kubernetes-PF-PriorityLevel-UID") != uids["pl/"+tc.pl] {
			t.Errorf("%s: headers %v, want %s/%s", tc.path, h, tc.fs, tc.pl)
		}
	}

	var catchAll flowcontrolv1.FlowSchema
	c.call(http.MethodGet, base+"flowschemas/catch-all", nil, http.StatusOK, &catchAll)
	catchAll.Spec.MatchingPrecedence = 5000
	code, _, data := c.do(http.MethodPut, base+"flowschemas/catch-all", &catchAll, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")

	var exempt flowcontrolv1.PriorityLevelConfiguration
	c.call(http.MethodGet, base+"prioritylevelconfigurations/exempt", nil, http.StatusOK, &exempt)
	exempt.Spec.Exempt.NominalConcurrencyShares = new(int32(10))
	c.call(http.MethodPut, base+"prioritylevelconfigurations/exempt", &exempt, http.StatusOK, nil)

	var created flowcontrolv1.PriorityLevelConfiguration
	c.call(http.MethodPost, base+"prioritylevelconfigurations", map[string]any{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration", "metadata": map[string]any{"name": "mine"},
		"spec": map[string]any{"type": "Limited", "limited": map[string]any{"limitResponse": map[string]any{"type": "Queue", "queuing": map[string]any{}}}},
	}, http.StatusCreated, &created)
	if l := created.Spec.Limited; *l.NominalConcurrencyShares != 30 || l.LimitResponse.Queuing.Queues != 64 || l.LimitResponse.Queuing.HandSize != 8 {
		t.Errorf("defaults not applied: %+v", l)
	}
	code, _, data = c.do(http.MethodPost, base+"flowschemas", map[string]any{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": map[string]any{"name": "bad"},
		"spec": map[string]any{"priorityLevelConfiguration": map[string]any{"name": "mine"}, "matchingPrecedence": 1},
	}, "", "")
	expectStatus(t, code, data, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		`FlowSchema.flowcontrol.apiserver.k8s.io "bad" is invalid: spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1`)
}

// A FlowSchema naming a missing priority level is marked Dangling (kubectl's
// MissingPL), and no longer once the level exists.
func TestFlowSchemaDangling(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	c := start(t, testenv.Config{Clock: fake})
	const base = "/apis/flowcontrol.apiserver.k8s.io/v1/"
	c.call(http.MethodPost, base+"flowschemas", map[string]any{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": map[string]any{"name": "mine"},
		"spec": map[string]any{"priorityLevelConfiguration": map[string]any{"name": "later"}},
	}, http.StatusCreated, nil)
	dangling := func() string {
		var fs flowcontrolv1.FlowSchema
		c.call(http.MethodGet, base+"flowschemas/mine", nil, http.StatusOK, &fs)
		for _, cond := range fs.Status.Conditions {
			if cond.Type == "Dangling" {
				return string(cond.Status)
			}
		}
		return ""
	}
	eventually(t, "mine to be dangling", func() bool { fake.Step(5 * time.Second); return dangling() == "True" })
	c.call(http.MethodPost, base+"prioritylevelconfigurations", map[string]any{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration", "metadata": map[string]any{"name": "later"},
		"spec": map[string]any{"type": "Limited", "limited": map[string]any{"limitResponse": map[string]any{"type": "Reject"}}},
	}, http.StatusCreated, nil)
	eventually(t, "mine to find its level", func() bool { fake.Step(5 * time.Second); return dangling() == "False" })

	// A deleted bootstrap object comes back.
	c.call(http.MethodDelete, base+"flowschemas/global-default", nil, http.StatusOK, nil)
	c.call(http.MethodDelete, base+"prioritylevelconfigurations/catch-all", nil, http.StatusOK, nil)
	eventually(t, "the bootstrap objects to come back", func() bool {
		fake.Step(5 * time.Second)
		a, _, _ := c.do(http.MethodGet, base+"flowschemas/global-default", nil, "", "")
		b, _, _ := c.do(http.MethodGet, base+"prioritylevelconfigurations/catch-all", nil, "", "")
		return a == http.StatusOK && b == http.StatusOK
	})
}
