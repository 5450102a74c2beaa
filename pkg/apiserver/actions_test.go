package apiserver_test

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/registry"
	"github.com/skiff-sh/skiff/pkg/registry/builtin"
	"github.com/skiff-sh/skiff/pkg/storage/memory"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// Action subresources are declared on the Definition: discovery lists
// them, a verb they do not declare is 405, and the server refuses to start
// with an action it has no handler for.
func TestActionSubresources(t *testing.T) {
	c := start(t)
	var list metav1.APIResourceList
	c.call(http.MethodGet, "/api/v1", nil, http.StatusOK, &list)
	verbs := map[string]string{}
	for _, r := range list.APIResources {
		verbs[r.Name] = strings.Join(r.Verbs, ",")
	}
	for name, want := range map[string]string{
		"pods/binding": "create", "pods/eviction": "create", "pods/log": "get", "pods/exec": "create,get",
		"pods/attach": "create,get", "pods/portforward": "create,get", "serviceaccounts/token": "create",
		"namespaces/finalize": "update", "pods/status": "get,patch,update", "pods/ephemeralcontainers": "get,patch,update",
	} {
		if verbs[name] != want {
			t.Errorf("discovery: %s verbs %q, want %q", name, verbs[name], want)
		}
	}
	ns := c.namespace("actions")
	c.call(http.MethodPost, "/api/v1/namespaces/"+ns+"/pods", pod("p", "nginx"), http.StatusCreated, nil)
	code, _, body := c.do(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/p/binding", nil, "", "")
	expectStatus(t, code, body, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "")

	defs := builtin.Definitions()
	for _, d := range defs {
		if d.Resource == "configmaps" {
			d.Actions = append(d.Actions, registry.Action{Name: "explode", Verbs: []string{"create"}})
		}
	}
	_, err := apiserver.New(apiserver.Config{KV: memory.New(memory.Config{}), Definitions: defs})
	if err == nil || !strings.Contains(err.Error(), "configmaps declares the explode subresource, which the API server has no handler for") {
		t.Errorf("New with an unknown action: %v", err)
	}
}

// skiff -v 2 logs one line per request.
func TestRequestLogAtDebug(t *testing.T) {
	var buf lockedLog
	c := start(t, testenv.Config{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	c.call(http.MethodGet, "/api/v1/namespaces/default", nil, http.StatusOK, nil)
	eventually(t, "the request line", func() bool {
		return strings.Contains(buf.String(), `msg=HTTP verb=GET URI=/api/v1/namespaces/default`) && strings.Contains(buf.String(), "resp=200")
	})
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
