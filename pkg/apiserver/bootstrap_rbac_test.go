package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/auth/bootstrappolicy"
	"github.com/skiff-sh/skiff/pkg/registry/builtin"
	"github.com/skiff-sh/skiff/pkg/storage"
	"github.com/skiff-sh/skiff/pkg/storage/memory"
)

// rbacServer is one start of an API server on kv, driven through its
// handler (no authenticator: every request is system:admin).
type rbacServer struct {
	t      *testing.T
	h      http.Handler
	cancel context.CancelFunc
}

func startRBACServer(t *testing.T, kv storage.KV) *rbacServer {
	t.Helper()
	s, err := apiserver.New(apiserver.Config{KV: kv, Definitions: builtin.Definitions(), Insecure: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return &rbacServer{t: t, h: s.Handler(), cancel: cancel}
}

func (s *rbacServer) do(method, path string, body any, want int, out any) {
	s.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	if rec.Code != want {
		s.t.Fatalf("%s %s: %d %s, want %d", method, path, rec.Code, rec.Body.String(), want)
	}
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			s.t.Fatal(err)
		}
	}
}

const rbacPath = "/apis/rbac.authorization.k8s.io/v1/"

// At every start the bootstrap RBAC policy is created and reconciled: a
// deleted role comes back, a rule or subject a user added stays, a rule
// removed from an autoupdated role is restored, an object annotated
// autoupdate=false is left as the user made it.
func TestBootstrapRBACReconciledAtStart(t *testing.T) {
	kv := memory.New(memory.Config{})
	first := startRBACServer(t, kv)

	var crs rbacv1.ClusterRoleList
	first.do(http.MethodGet, rbacPath+"clusterroles?labelSelector=kubernetes.io/bootstrapping%3Drbac-defaults", nil, http.StatusOK, &crs)
	if want := len(bootstrappolicy.ClusterRoles()) + len(bootstrappolicy.ControllerRoles()) + len(bootstrappolicy.SkiffClusterRoles()); len(crs.Items) != want {
		t.Fatalf("%d bootstrap cluster roles, want %d", len(crs.Items), want)
	}
	var crbs rbacv1.ClusterRoleBindingList
	first.do(http.MethodGet, rbacPath+"clusterrolebindings", nil, http.StatusOK, &crbs)
	if want := len(bootstrappolicy.ClusterRoleBindings()) + len(bootstrappolicy.ControllerRoleBindings()) + len(bootstrappolicy.SkiffClusterRoleBindings()); len(crbs.Items) != want {
		t.Fatalf("%d cluster role bindings, want %d", len(crbs.Items), want)
	}
	var leader rbacv1.RoleBinding
	first.do(http.MethodGet, rbacPath+"namespaces/kube-system/rolebindings/system::leader-locking-kube-scheduler", nil, http.StatusOK, &leader)
	var signer rbacv1.Role
	first.do(http.MethodGet, rbacPath+"namespaces/kube-public/roles/system:controller:bootstrap-signer", nil, http.StatusOK, &signer)
	var scheduler rbacv1.ClusterRole
	first.do(http.MethodGet, rbacPath+"clusterroles/system:kube-scheduler", nil, http.StatusOK, &scheduler)
	if len(scheduler.ManagedFields) == 0 || scheduler.ManagedFields[0].Manager != "kube-apiserver" {
		t.Errorf("managedFields = %+v, want manager kube-apiserver", scheduler.ManagedFields)
	}

	// What users do between two starts.
	first.do(http.MethodDelete, rbacPath+"clusterroles/system:kube-scheduler", nil, http.StatusOK, nil)

	var dns rbacv1.ClusterRole
	first.do(http.MethodGet, rbacPath+"clusterroles/system:kube-dns", nil, http.StatusOK, &dns)
	mine := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}
	dns.Rules = []rbacv1.PolicyRule{mine} // upstream's list/watch endpoints,services removed
	dns.Labels["mine"] = "yes"
	first.do(http.MethodPut, rbacPath+"clusterroles/system:kube-dns", &dns, http.StatusOK, nil)

	var proxier rbacv1.ClusterRole
	first.do(http.MethodGet, rbacPath+"clusterroles/system:node-proxier", nil, http.StatusOK, &proxier)
	proxier.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
	proxier.Rules = []rbacv1.PolicyRule{mine}
	first.do(http.MethodPut, rbacPath+"clusterroles/system:node-proxier", &proxier, http.StatusOK, nil)

	var basic rbacv1.ClusterRoleBinding
	first.do(http.MethodGet, rbacPath+"clusterrolebindings/system:basic-user", nil, http.StatusOK, &basic)
	basic.Subjects = []rbacv1.Subject{{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "mine"}}
	first.do(http.MethodPut, rbacPath+"clusterrolebindings/system:basic-user", &basic, http.StatusOK, nil)

	leader.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
	leader.Subjects = []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "mine"}}
	first.do(http.MethodPut, rbacPath+"namespaces/kube-system/rolebindings/system::leader-locking-kube-scheduler", &leader, http.StatusOK, nil)

	first.do(http.MethodDelete, rbacPath+"namespaces/kube-public/roles/system:controller:bootstrap-signer", nil, http.StatusOK, nil)
	first.cancel()

	second := startRBACServer(t, kv)
	// The post-start hook's check, on /healthz, /livez and /readyz as
	// upstream's.
	for _, kind := range []string{"healthz", "livez", "readyz"} {
		second.do(http.MethodGet, "/"+kind+"/poststarthook/rbac/bootstrap-roles", nil, http.StatusOK, nil)
	}

	var got rbacv1.ClusterRole
	second.do(http.MethodGet, rbacPath+"clusterroles/system:kube-scheduler", nil, http.StatusOK, &got)
	if !reflect.DeepEqual(got.Rules, scheduler.Rules) {
		t.Errorf("recreated system:kube-scheduler rules = %v, want %v", got.Rules, scheduler.Rules)
	}

	got = rbacv1.ClusterRole{} // encoding/json reuses slice elements: decode into a fresh object
	second.do(http.MethodGet, rbacPath+"clusterroles/system:kube-dns", nil, http.StatusOK, &got)
	wantDNS := []rbacv1.PolicyRule{mine,
		{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"endpoints"}},
		{Verbs: []string{"watch"}, APIGroups: []string{""}, Resources: []string{"endpoints"}},
		{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"services"}},
		{Verbs: []string{"watch"}, APIGroups: []string{""}, Resources: []string{"services"}},
	}
	if !reflect.DeepEqual(got.Rules, wantDNS) || got.Labels["mine"] != "yes" {
		t.Errorf("system:kube-dns rules = %v labels = %v, want %v and the user's label", got.Rules, got.Labels, wantDNS)
	}

	got = rbacv1.ClusterRole{}
	second.do(http.MethodGet, rbacPath+"clusterroles/system:node-proxier", nil, http.StatusOK, &got)
	if !reflect.DeepEqual(got.Rules, []rbacv1.PolicyRule{mine}) {
		t.Errorf("protected system:node-proxier rules = %v, want the user's", got.Rules)
	}

	var gotBinding rbacv1.ClusterRoleBinding
	second.do(http.MethodGet, rbacPath+"clusterrolebindings/system:basic-user", nil, http.StatusOK, &gotBinding)
	wantSubjects := []rbacv1.Subject{basic.Subjects[0], {Kind: "Group", APIGroup: rbacv1.GroupName, Name: "system:authenticated"}}
	if !reflect.DeepEqual(gotBinding.Subjects, wantSubjects) {
		t.Errorf("system:basic-user subjects = %v, want %v", gotBinding.Subjects, wantSubjects)
	}

	var gotLeader rbacv1.RoleBinding
	second.do(http.MethodGet, rbacPath+"namespaces/kube-system/rolebindings/system::leader-locking-kube-scheduler", nil, http.StatusOK, &gotLeader)
	if !reflect.DeepEqual(gotLeader.Subjects, leader.Subjects) {
		t.Errorf("protected leader-locking binding subjects = %v, want %v", gotLeader.Subjects, leader.Subjects)
	}
	var gotSigner rbacv1.Role
	second.do(http.MethodGet, rbacPath+"namespaces/kube-public/roles/system:controller:bootstrap-signer", nil, http.StatusOK, &gotSigner)
	if !reflect.DeepEqual(gotSigner.Rules, signer.Rules) {
		t.Errorf("recreated bootstrap-signer role rules = %v, want %v", gotSigner.Rules, signer.Rules)
	}
}
