package apiserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

func TestComponentStatuses(t *testing.T) {
	healthy := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer healthy.Close()
	c := start(t, testenv.Config{Tweak: func(cfg *apiserver.Config) {
		cfg.ComponentHealthz = map[string]string{"scheduler": healthy.URL + "/healthz", "controller-manager": "https://127.0.0.1:1/healthz"}
	}})
	code, hdr, body := c.do(http.MethodGet, "/api/v1/componentstatuses", nil, "", "")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, body)
	}
	if !strings.Contains(hdr.Get("Warning"), "v1 ComponentStatus is deprecated in v1.19+") {
		t.Errorf("Warning = %q", hdr.Get("Warning"))
	}
	var list corev1.ComponentStatusList
	if err := jsonUnmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	got := map[string]corev1.ComponentCondition{}
	for _, cs := range list.Items {
		got[cs.Name] = cs.Conditions[0]
	}
	if got["etcd-0"].Status != corev1.ConditionTrue || got["scheduler"].Status != corev1.ConditionTrue || got["scheduler"].Message != "ok" {
		t.Errorf("healthy components: %+v", got)
	}
	if cm := got["controller-manager"]; cm.Status != corev1.ConditionFalse || !strings.Contains(cm.Error, "connect") {
		t.Errorf("controller-manager: %+v", cm)
	}
	var one corev1.ComponentStatus
	c.call(http.MethodGet, "/api/v1/componentstatuses/etcd-0", nil, http.StatusOK, &one)
	code, _, body = c.do(http.MethodGet, "/api/v1/componentstatuses/nope", nil, "", "")
	expectStatus(t, code, body, http.StatusNotFound, metav1.StatusReasonNotFound, `componentstatuses "nope" not found`)
	code, _, body = c.do(http.MethodDelete, "/api/v1/componentstatuses/etcd-0", nil, "", "")
	expectStatus(t, code, body, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "")
}
