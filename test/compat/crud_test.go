package compat

// Real client-go Clientset against skiff: CRUD, selectors, paging, watch,
// patches, subresources and API errors.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// TestClientGoConfigMapCRUD: create, get, update, list, delete, and the
// NotFound that follows.
func TestClientGoConfigMapCRUD(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	ctx := context.Background()
	ns := createNamespace(t, cs, "crud")
	cms := cs.CoreV1().ConfigMaps(ns)

	created, err := cms.Create(ctx, testConfigMap(ns, "cfg", map[string]string{"app": "x"}, map[string]string{"a": "1"}), metav1.CreateOptions{})
	must(t, err, "create")
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Fatalf("create did not set uid/resourceVersion/creationTimestamp: %+v", created.ObjectMeta)
	}
	got, err := cms.Get(ctx, "cfg", metav1.GetOptions{})
	must(t, err, "get")
	if got.UID != created.UID || got.Data["a"] != "1" || got.Labels["app"] != "x" {
		t.Fatalf("get = %+v, want the created object", got)
	}

	got.Data["b"] = "2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "update")
	if updated.ResourceVersion == got.ResourceVersion || updated.Data["b"] != "2" {
		t.Fatalf("update: rv %s -> %s, data %v", got.ResourceVersion, updated.ResourceVersion, updated.Data)
	}

	// An update that changes nothing writes nothing: same resourceVersion.
	same, err := cms.Update(ctx, updated.DeepCopy(), metav1.UpdateOptions{})
	must(t, err, "no-op update")
	if same.ResourceVersion != updated.ResourceVersion {
		t.Errorf("no-op update moved resourceVersion %s -> %s", updated.ResourceVersion, same.ResourceVersion)
	}

	list, err := cms.List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if names := itemNames(list.Items); !slices.Equal(names, []string{"cfg", rootCA}) || list.ResourceVersion == "" {
		t.Fatalf("list = %v, rv %q", names, list.ResourceVersion)
	}

	must(t, cms.Delete(ctx, "cfg", metav1.DeleteOptions{}), "delete")
	if _, err := cms.Get(ctx, "cfg", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want NotFound", err)
	}

	// generateName
	gen, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
	must(t, err, "create with generateName")
	if !strings.HasPrefix(gen.Name, "gen-") || len(gen.Name) <= len("gen-") {
		t.Fatalf("generateName gave %q", gen.Name)
	}

	// DeleteCollection with a label selector.
	for i := range 3 {
		_, err := cms.Create(ctx, testConfigMap(ns, fmt.Sprintf("dc-%d", i), map[string]string{"dc": "yes"}, nil), metav1.CreateOptions{})
		must(t, err, "create dc-%d", i)
	}
	must(t, cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "dc=yes"}), "deletecollection")
	list, err = cms.List(ctx, metav1.ListOptions{})
	must(t, err, "list")
	if names := itemNames(list.Items); !slices.Equal(names, []string{gen.Name, rootCA}) {
		t.Fatalf("after deletecollection: %v, want [%s %s]", names, gen.Name, rootCA)
	}
}

// TestClientGoPodAndDeployment: pods and deployments through the typed
// clients, the status subresource of both, the scale subresource, and
// generation bumps.
func TestClientGoPodAndDeployment(t *testing.T) {
	t.Parallel()
	// The test writes the Deployment's status and scale itself: no
	// workload controllers racing it.
	env := startEnv(t, "deployment-controller", "replicaset-controller")
	cs := clientset(t, restConfig(t, env))
	ctx := context.Background()
	ns := createNamespace(t, cs, "apps")

	// Pod: defaults, status subresource ignores spec, main resource ignores status.
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, testPod(ns, "p", map[string]string{"app": "p"}), metav1.CreateOptions{})
	must(t, err, "create pod")
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("new pod phase = %q, want Pending", pod.Status.Phase)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || pod.Spec.DNSPolicy != corev1.DNSClusterFirst ||
		pod.Spec.Containers[0].TerminationMessagePath != "/dev/termination-log" || pod.Spec.SchedulerName != "default-scheduler" {
		t.Errorf("pod defaults missing: restartPolicy=%q dnsPolicy=%q terminationMessagePath=%q schedulerName=%q",
			pod.Spec.RestartPolicy, pod.Spec.DNSPolicy, pod.Spec.Containers[0].TerminationMessagePath, pod.Spec.SchedulerName)
	}
	st := pod.DeepCopy()
	st.Status.Phase = corev1.PodRunning
	st.Status.PodIP = "10.1.2.3"
	st.Spec.ActiveDeadlineSeconds = ptr.To[int64](99) // ignored by the status subresource
	afterStatus, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, st, metav1.UpdateOptions{})
	must(t, err, "pod UpdateStatus")
	if afterStatus.Status.Phase != corev1.PodRunning || afterStatus.Status.PodIP != "10.1.2.3" {
		t.Errorf("UpdateStatus did not store status: %+v", afterStatus.Status)
	}
	if afterStatus.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("UpdateStatus changed spec.activeDeadlineSeconds to %d", *afterStatus.Spec.ActiveDeadlineSeconds)
	}
	up := afterStatus.DeepCopy()
	up.Labels["v"] = "2"
	up.Status.Phase = corev1.PodFailed // ignored by the main resource
	afterUpdate, err := cs.CoreV1().Pods(ns).Update(ctx, up, metav1.UpdateOptions{})
	must(t, err, "pod Update")
	if afterUpdate.Labels["v"] != "2" || afterUpdate.Status.Phase != corev1.PodRunning {
		t.Errorf("Update: labels %v phase %q, want v=2 and phase Running", afterUpdate.Labels, afterUpdate.Status.Phase)
	}

	// Deployment: generation, status subresource, scale subresource.
	dep, err := cs.AppsV1().Deployments(ns).Create(ctx, testDeployment(ns, "web", 2), metav1.CreateOptions{})
	must(t, err, "create deployment")
	if dep.Generation != 1 {
		t.Errorf("new deployment generation = %d, want 1", dep.Generation)
	}
	if dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || dep.Spec.RevisionHistoryLimit == nil || *dep.Spec.RevisionHistoryLimit != 10 {
		t.Errorf("deployment defaults missing: strategy %q revisionHistoryLimit %v", dep.Spec.Strategy.Type, dep.Spec.RevisionHistoryLimit)
	}
	ds := dep.DeepCopy()
	ds.Status.ObservedGeneration = 1
	ds.Status.Replicas = 2
	ds.Status.ReadyReplicas = 1
	dep2, err := cs.AppsV1().Deployments(ns).UpdateStatus(ctx, ds, metav1.UpdateOptions{})
	must(t, err, "deployment UpdateStatus")
	if dep2.Status.ReadyReplicas != 1 || dep2.Generation != 1 {
		t.Errorf("after UpdateStatus: readyReplicas %d generation %d, want 1 and 1", dep2.Status.ReadyReplicas, dep2.Generation)
	}

	scale, err := cs.AppsV1().Deployments(ns).GetScale(ctx, "web", metav1.GetOptions{})
	must(t, err, "GetScale")
	if scale.Spec.Replicas != 2 || scale.Status.Replicas != 2 || scale.Name != "web" || scale.Namespace != ns {
		t.Errorf("GetScale = %+v", scale)
	}
	if scale.Status.Selector != "app=web" {
		t.Errorf("scale.status.selector = %q, want app=web", scale.Status.Selector)
	}
	scale.Spec.Replicas = 5
	scaled, err := cs.AppsV1().Deployments(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{})
	must(t, err, "UpdateScale")
	if scaled.Spec.Replicas != 5 {
		t.Errorf("UpdateScale returned spec.replicas %d, want 5", scaled.Spec.Replicas)
	}
	dep3, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	must(t, err, "get deployment")
	if *dep3.Spec.Replicas != 5 || dep3.Generation != 2 {
		t.Errorf("after UpdateScale: replicas %d generation %d, want 5 and 2", *dep3.Spec.Replicas, dep3.Generation)
	}
	// A stale scale is a conflict.
	scale.Spec.Replicas = 7
	if _, err := cs.AppsV1().Deployments(ns).UpdateScale(ctx, "web", scale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("UpdateScale with a stale resourceVersion: %v, want Conflict", err)
	}

	// Dynamic client: unstructured get and update of the same deployment.
	dyn, err := dynamic.NewForConfig(restConfig(t, env))
	must(t, err, "dynamic.NewForConfig")
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	must(t, err, "dynamic get")
	if u.GetKind() != "Deployment" || u.GetAPIVersion() != "apps/v1" {
		t.Errorf("dynamic get: kind %q apiVersion %q", u.GetKind(), u.GetAPIVersion())
	}
	must(t, unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas"), "set replicas")
	u2, err := dyn.Resource(gvr).Namespace(ns).Update(ctx, u, metav1.UpdateOptions{})
	must(t, err, "dynamic update")
	if r, _, _ := unstructured.NestedInt64(u2.Object, "spec", "replicas"); r != 3 {
		t.Errorf("dynamic update: replicas %d, want 3", r)
	}
	ul, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "dynamic list")
	if len(ul.Items) != 1 || ul.GetKind() != "DeploymentList" {
		t.Errorf("dynamic list: %d items kind %q", len(ul.Items), ul.GetKind())
	}
}

// TestClientGoSelectors: label selectors (=, !=, in, notin, exists,
// !exists) and field selectors (metadata.name, spec.nodeName, status.phase).
func TestClientGoSelectors(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	ctx := context.Background()
	ns := createNamespace(t, cs, "sel")
	for name, labels := range map[string]map[string]string{
		"c1": {"tier": "a", "env": "prod"},
		"c2": {"tier": "b", "env": "prod"},
		"c3": {"tier": "a"},
		"c4": {"tier": "c"},
		"c5": nil,
	} {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, testConfigMap(ns, name, labels, nil), metav1.CreateOptions{})
		must(t, err, "create %s", name)
	}
	for _, tc := range []struct {
		label, field string
		want         []string
	}{
		{label: "tier=a", want: []string{"c1", "c3"}},
		{label: "tier==a", want: []string{"c1", "c3"}},
		{label: "tier!=a", want: []string{"c2", "c4", "c5", rootCA}},
		{label: "tier in (a,b)", want: []string{"c1", "c2", "c3"}},
		{label: "tier notin (a,b)", want: []string{"c4", "c5", rootCA}},
		{label: "env", want: []string{"c1", "c2"}},
		{label: "!env", want: []string{"c3", "c4", "c5", rootCA}},
		{label: "tier=a,env=prod", want: []string{"c1"}},
		{field: "metadata.name=c2", want: []string{"c2"}},
		{field: "metadata.name!=c2", want: []string{"c1", "c3", "c4", "c5", rootCA}},
		{field: "metadata.namespace=" + ns, label: "tier=a", want: []string{"c1", "c3"}},
	} {
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: tc.label, FieldSelector: tc.field})
		if err != nil {
			t.Errorf("list label=%q field=%q: %v", tc.label, tc.field, err)
			continue
		}
		if got := itemNames(list.Items); !slices.Equal(got, tc.want) {
			t.Errorf("list label=%q field=%q = %v, want %v", tc.label, tc.field, got, tc.want)
		}
	}

	// Pod field selectors: spec.nodeName and status.phase.
	for i, node := range []string{"n1", "n2", ""} {
		p := testPod(ns, fmt.Sprintf("p%d", i), nil)
		p.Spec.NodeName = node
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		must(t, err, "create pod p%d", i)
	}
	p1, err := cs.CoreV1().Pods(ns).Get(ctx, "p1", metav1.GetOptions{})
	must(t, err, "get p1")
	p1.Status.Phase = corev1.PodRunning
	_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p1, metav1.UpdateOptions{})
	must(t, err, "p1 UpdateStatus")
	for _, tc := range []struct {
		field string
		want  []string
	}{
		{"spec.nodeName=n1", []string{"p0"}},
		{"spec.nodeName=", []string{"p2"}},
		{"spec.nodeName!=", []string{"p0", "p1"}},
		{"status.phase=Running", []string{"p1"}},
		{"status.phase!=Running", []string{"p0", "p2"}},
		{"spec.nodeName=n2,status.phase=Running", []string{"p1"}},
	} {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: tc.field})
		if err != nil {
			t.Errorf("pods field=%q: %v", tc.field, err)
			continue
		}
		if got := podNames(list.Items); !slices.Equal(got, tc.want) {
			t.Errorf("pods field=%q = %v, want %v", tc.field, got, tc.want)
		}
	}
	// An unknown field is a 400 BadRequest.
	_, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nope=1"})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("list with an unsupported field selector: %v, want BadRequest", err)
	}
}

// TestClientGoPaging: limit/continue by hand and through client-go's pager;
// pages are a consistent snapshot.
func TestClientGoPaging(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	ctx := context.Background()
	ns := createNamespace(t, cs, "paging")
	cms := cs.CoreV1().ConfigMaps(ns)
	var want []string
	for i := range 25 { // 26 with kube-root-ca.crt, which sorts last
		name := fmt.Sprintf("cm-%02d", i)
		want = append(want, name)
		_, err := cms.Create(ctx, testConfigMap(ns, name, nil, nil), metav1.CreateOptions{})
		must(t, err, "create %s", name)
	}

	var got []string
	var sizes []int
	opts := metav1.ListOptions{Limit: 10}
	var firstRV string
	for page := 0; ; page++ {
		list, err := cms.List(ctx, opts)
		must(t, err, "list page %d", page)
		sizes = append(sizes, len(list.Items))
		got = append(got, itemNames(list.Items)...)
		if page == 0 {
			firstRV = list.ResourceVersion
			if list.RemainingItemCount == nil || *list.RemainingItemCount != 16 {
				t.Errorf("first page remainingItemCount = %v, want 16", ptr.Deref(list.RemainingItemCount, -1))
			}
			// A change after the first page is not seen by the later pages.
			_, err := cms.Create(ctx, testConfigMap(ns, "cm-99-late", nil, nil), metav1.CreateOptions{})
			must(t, err, "create late")
		} else if list.ResourceVersion != firstRV {
			t.Errorf("page %d resourceVersion %s, want the first page's %s", page, list.ResourceVersion, firstRV)
		}
		if list.Continue == "" {
			break
		}
		if page > 5 {
			t.Fatalf("too many pages")
		}
		opts.Continue = list.Continue
	}
	want = append(want, rootCA)
	if !slices.Equal(sizes, []int{10, 10, 6}) {
		t.Errorf("page sizes %v, want [10 10 6]", sizes)
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged names %v, want %v", got, want)
	}

	// client-go's pager (what kubectl and the Reflector use).
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return cms.List(ctx, opts)
	})
	p.PageSize = 7
	var pagerNames []string
	must(t, p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		pagerNames = append(pagerNames, obj.(*corev1.ConfigMap).Name)
		return nil
	}), "pager")
	if wantAll := append(slices.Clone(want[:25]), "cm-99-late", rootCA); !slices.Equal(pagerNames, wantAll) {
		t.Errorf("pager names %v, want %v", pagerNames, wantAll)
	}

	// A bad continue token is a 400 BadRequest.
	if _, err := cms.List(ctx, metav1.ListOptions{Limit: 10, Continue: "garbage"}); !apierrors.IsBadRequest(err) {
		t.Errorf("list with a bad continue token: %v, want BadRequest", err)
	}
}

// TestClientGoWatch: watch from a list's resourceVersion delivers every
// change once and in order; selector watches see objects leave and enter;
// timeoutSeconds ends the watch; sendInitialEvents streams the state and a
// bookmark.
func TestClientGoWatch(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	ctx := context.Background()
	ns := createNamespace(t, cs, "watch")
	cms := cs.CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx, testConfigMap(ns, "before", nil, nil), metav1.CreateOptions{})
	must(t, err, "create before")
	list, err := cms.List(ctx, metav1.ListOptions{})
	must(t, err, "list")

	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	must(t, err, "watch")
	defer w.Stop()
	sel, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "watched=yes"})
	must(t, err, "selector watch")
	defer sel.Stop()

	c, err := cms.Create(ctx, testConfigMap(ns, "w", map[string]string{"watched": "yes"}, nil), metav1.CreateOptions{})
	must(t, err, "create")
	c.Data = map[string]string{"k": "v"}
	c2, err := cms.Update(ctx, c, metav1.UpdateOptions{})
	must(t, err, "update")
	c2.Labels["watched"] = "no"
	c3, err := cms.Update(ctx, c2, metav1.UpdateOptions{})
	must(t, err, "update labels out")
	c3.Labels["watched"] = "yes"
	c4, err := cms.Update(ctx, c3, metav1.UpdateOptions{})
	must(t, err, "update labels in")
	must(t, cms.Delete(ctx, "w", metav1.DeleteOptions{}), "delete")

	evs := collectEvents(t, w, 5)
	wantTypes := []watch.EventType{watch.Added, watch.Modified, watch.Modified, watch.Modified, watch.Deleted}
	wantRVs := []string{c.ResourceVersion, c2.ResourceVersion, c3.ResourceVersion, c4.ResourceVersion}
	for i, ev := range evs {
		cm := ev.Object.(*corev1.ConfigMap)
		if ev.Type != wantTypes[i] || cm.Name != "w" {
			t.Errorf("event %d = %s %s, want %s w", i, ev.Type, cm.Name, wantTypes[i])
		}
		if i < len(wantRVs) && cm.ResourceVersion != wantRVs[i] {
			t.Errorf("event %d resourceVersion %s, want %s", i, cm.ResourceVersion, wantRVs[i])
		}
	}
	if last := evs[4].Object.(*corev1.ConfigMap); rvLess(last.ResourceVersion, c4.ResourceVersion) || last.ResourceVersion == c4.ResourceVersion {
		t.Errorf("DELETED resourceVersion %s, want one after the last update's %s", last.ResourceVersion, c4.ResourceVersion)
	}

	// The selector watch: ADDED, MODIFIED, DELETED (left the selector),
	// ADDED (came back), DELETED.
	sevs := collectEvents(t, sel, 5)
	var got []string
	for _, ev := range sevs {
		got = append(got, string(ev.Type))
	}
	if want := []string{"ADDED", "MODIFIED", "DELETED", "ADDED", "DELETED"}; !slices.Equal(got, want) {
		t.Errorf("selector watch events %v, want %v", got, want)
	}

	// timeoutSeconds closes the watch.
	tw, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: c4.ResourceVersion, TimeoutSeconds: ptr.To[int64](1)})
	must(t, err, "watch with timeout")
	start := time.Now()
	for range tw.ResultChan() {
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("watch with timeoutSeconds=1 lasted %v", d)
	}

	// sendInitialEvents: the current state as ADDED, then the
	// initial-events-end bookmark.
	iw, err := cms.Watch(ctx, metav1.ListOptions{
		SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	})
	must(t, err, "watch with sendInitialEvents")
	defer iw.Stop()
	ievs := collectEvents(t, iw, 3)
	for i, name := range []string{"before", rootCA} {
		if ievs[i].Type != watch.Added || ievs[i].Object.(*corev1.ConfigMap).Name != name {
			t.Errorf("initial event %d = %s %v, want ADDED %s", i, ievs[i].Type, ievs[i].Object.(*corev1.ConfigMap).Name, name)
		}
	}
	if ievs[2].Type != watch.Bookmark {
		t.Errorf("third event = %s, want BOOKMARK", ievs[2].Type)
	} else if bm := ievs[2].Object.(*corev1.ConfigMap); bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || bm.ResourceVersion == "" {
		t.Errorf("bookmark annotations %v rv %q, want %s=true and a resourceVersion", bm.Annotations, bm.ResourceVersion, metav1.InitialEventsAnnotationKey)
	}

	// A watch from an older resourceVersion replays what followed it.
	ow, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	must(t, err, "watch from old rv")
	if oevs := collectEvents(t, ow, 5); oevs[0].Type != watch.Added {
		t.Errorf("replay from old rv starts with %s", oevs[0].Type)
	}
	ow.Stop()
}

// TestClientGoPatch: strategic merge (lists merged by key), JSON merge
// (lists replaced, null deletes) and JSON patch (test/replace/add/remove;
// a failed test is 422 Invalid).
func TestClientGoPatch(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	ctx := context.Background()
	ns := createNamespace(t, cs, "patch")
	deps := cs.AppsV1().Deployments(ns)
	_, err := deps.Create(ctx, testDeployment(ns, "web", 1), metav1.CreateOptions{})
	must(t, err, "create deployment")

	sidecar := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"}]}}}}`)
	d, err := deps.Patch(ctx, "web", types.StrategicMergePatchType, sidecar, metav1.PatchOptions{})
	must(t, err, "strategic merge patch")
	if names := containerNames(d.Spec.Template.Spec.Containers); !slices.Equal(names, []string{"sidecar", "web"}) && !slices.Equal(names, []string{"web", "sidecar"}) {
		t.Errorf("strategic merge patch containers %v, want web and sidecar", names)
	}
	if d.Generation != 2 {
		t.Errorf("generation after a spec patch = %d, want 2", d.Generation)
	}
	// $patch: delete directive removes one list element by key.
	d, err = deps.Patch(ctx, "web", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`), metav1.PatchOptions{})
	must(t, err, "strategic merge patch $patch: delete")
	if names := containerNames(d.Spec.Template.Spec.Containers); !slices.Equal(names, []string{"web"}) {
		t.Errorf("after $patch: delete containers %v, want [web]", names)
	}

	d, err = deps.Patch(ctx, "web", types.MergePatchType, sidecar, metav1.PatchOptions{})
	must(t, err, "merge patch")
	if names := containerNames(d.Spec.Template.Spec.Containers); !slices.Equal(names, []string{"sidecar"}) {
		t.Errorf("merge patch containers %v, want [sidecar] (lists are replaced)", names)
	}

	cms := cs.CoreV1().ConfigMaps(ns)
	_, err = cms.Create(ctx, testConfigMap(ns, "cfg", map[string]string{"keep": "1"}, map[string]string{"a": "1", "b": "2"}), metav1.CreateOptions{})
	must(t, err, "create cfg")
	cm, err := cms.Patch(ctx, "cfg", types.MergePatchType, []byte(`{"data":{"a":null,"c":"3"}}`), metav1.PatchOptions{})
	must(t, err, "merge patch cfg")
	if want := map[string]string{"b": "2", "c": "3"}; !mapsEqual(cm.Data, want) {
		t.Errorf("merge patch data %v, want %v", cm.Data, want)
	}
	cm, err = cms.Patch(ctx, "cfg", types.JSONPatchType,
		[]byte(`[{"op":"test","path":"/data/b","value":"2"},{"op":"replace","path":"/data/b","value":"20"},{"op":"add","path":"/metadata/labels/x","value":"y"},{"op":"remove","path":"/data/c"}]`),
		metav1.PatchOptions{})
	must(t, err, "json patch")
	if !mapsEqual(cm.Data, map[string]string{"b": "20"}) || !mapsEqual(cm.Labels, map[string]string{"keep": "1", "x": "y"}) {
		t.Errorf("json patch: data %v labels %v", cm.Data, cm.Labels)
	}
	_, err = cms.Patch(ctx, "cfg", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/b","value":"nope"}]`), metav1.PatchOptions{})
	if code := statusCode(err); !apierrors.IsInvalid(err) || code != http.StatusUnprocessableEntity {
		t.Errorf("json patch with a failing test: %v (code %d), want 422 Invalid", err, code)
	}
	_, err = cms.Patch(ctx, "missing", types.MergePatchType, []byte(`{"data":{"a":"1"}}`), metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("patch of a missing object: %v, want NotFound", err)
	}
	// Patch of the status subresource.
	p, err := cs.CoreV1().Pods(ns).Create(ctx, testPod(ns, "p", nil), metav1.CreateOptions{})
	must(t, err, "create pod")
	p, err = cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status")
	must(t, err, "status patch")
	if p.Status.Phase != corev1.PodRunning {
		t.Errorf("status patch phase %q", p.Status.Phase)
	}
	// Dry run does not persist.
	_, err = cms.Patch(ctx, "cfg", types.MergePatchType, []byte(`{"data":{"dry":"run"}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	must(t, err, "dry-run patch")
	cm, err = cms.Get(ctx, "cfg", metav1.GetOptions{})
	must(t, err, "get cfg")
	if _, ok := cm.Data["dry"]; ok {
		t.Errorf("dry-run patch was persisted")
	}
}

// TestClientGoErrors: apierrors helpers on skiff's Status errors, with
// upstream's reasons, codes, details and causes; RetryOnConflict under
// concurrent writers.
func TestClientGoErrors(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	ctx := context.Background()
	ns := createNamespace(t, cs, "errs")
	cms := cs.CoreV1().ConfigMaps(ns)

	_, err := cms.Get(ctx, "nope", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || statusCode(err) != 404 {
		t.Errorf("get missing: %v, want 404 NotFound", err)
	} else if se := statusOf(err); se.Message != `configmaps "nope" not found` || se.Details == nil || se.Details.Name != "nope" || se.Details.Kind != "configmaps" {
		t.Errorf("NotFound status: message %q details %+v", se.Message, se.Details)
	}
	if err := cms.Delete(ctx, "nope", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delete missing: %v, want NotFound", err)
	}

	cm, err := cms.Create(ctx, testConfigMap(ns, "dup", nil, nil), metav1.CreateOptions{})
	must(t, err, "create")
	_, err = cms.Create(ctx, testConfigMap(ns, "dup", nil, nil), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) || statusCode(err) != 409 {
		t.Errorf("create twice: %v, want 409 AlreadyExists", err)
	} else if se := statusOf(err); se.Message != `configmaps "dup" already exists` {
		t.Errorf("AlreadyExists message %q", se.Message)
	}

	stale := cm.DeepCopy()
	cm.Data = map[string]string{"x": "1"}
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	must(t, err, "update")
	stale.Data = map[string]string{"x": "2"}
	_, err = cms.Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) || statusCode(err) != 409 {
		t.Errorf("stale update: %v, want 409 Conflict", err)
	} else if se := statusOf(err); !strings.Contains(se.Message, "the object has been modified; please apply your changes to the latest version and try again") {
		t.Errorf("Conflict message %q", se.Message)
	}
	// Delete with a stale UID precondition is a conflict too.
	wrongUID := types.UID("00000000-0000-0000-0000-000000000000")
	if err := cms.Delete(ctx, "dup", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}}); !apierrors.IsConflict(err) {
		t.Errorf("delete with a wrong uid precondition: %v, want Conflict", err)
	}

	// Invalid, with causes.
	_, err = cms.Create(ctx, testConfigMap(ns, "Bad_Name", nil, nil), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || statusCode(err) != 422 {
		t.Errorf("invalid name: %v, want 422 Invalid", err)
	} else {
		se := statusOf(err)
		if !strings.HasPrefix(se.Message, `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`) {
			t.Errorf("Invalid message %q", se.Message)
		}
		if se.Details == nil || se.Details.Kind != "ConfigMap" || se.Details.Name != "Bad_Name" || !hasCause(se.Details.Causes, metav1.CauseTypeFieldValueInvalid, "metadata.name") {
			t.Errorf("Invalid details %+v", se.Details)
		}
	}
	_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "empty"}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("pod without containers: %v, want Invalid", err)
	} else if se := statusOf(err); se.Details == nil || !hasCause(se.Details.Causes, metav1.CauseTypeFieldValueRequired, "spec.containers") {
		t.Errorf("pod without containers causes %+v", se.Details)
	}

	// An object in a namespace that does not exist.
	_, err = cs.CoreV1().ConfigMaps("no-such-ns").Create(ctx, testConfigMap("no-such-ns", "x", nil, nil), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("create in a missing namespace: %v, want NotFound", err)
	}

	// The namespace in the body must match the URL's.
	_, err = cms.Create(ctx, testConfigMap("other", "x", nil, nil), metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("create with a mismatched namespace: %v, want BadRequest", err)
	}

	// RetryOnConflict: concurrent read-modify-write increments lose none.
	_, err = cms.Create(ctx, testConfigMap(ns, "counter", nil, map[string]string{"n": "0"}), metav1.CreateOptions{})
	must(t, err, "create counter")
	var wg sync.WaitGroup
	const writers, each = 4, 10
	// retry.DefaultRetry's 5 tries are for occasional conflicts; these
	// writers collide all the time.
	contended := wait.Backoff{Steps: 100, Duration: time.Millisecond, Factor: 1.2, Jitter: 1, Cap: 50 * time.Millisecond}
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for range each {
				err := retry.RetryOnConflict(contended, func() error {
					c, err := cms.Get(ctx, "counter", metav1.GetOptions{})
					if err != nil {
						return err
					}
					n, _ := strconv.Atoi(c.Data["n"])
					c.Data["n"] = strconv.Itoa(n + 1)
					_, err = cms.Update(ctx, c, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("RetryOnConflict: %v", err)
	}
	c, err := cms.Get(ctx, "counter", metav1.GetOptions{})
	must(t, err, "get counter")
	if c.Data["n"] != strconv.Itoa(writers*each) {
		t.Errorf("counter = %s, want %d", c.Data["n"], writers*each)
	}
}

// TestClientGoProtobuf: get, list, create, update, watch and an informer
// with ContentType "application/vnd.kubernetes.protobuf" (what client-go's
// typed clients use by default); the server answers in protobuf.
func TestClientGoProtobuf(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cfg := restConfig(t, env)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	var log requestLog
	cfg.Wrap(log.wrap)
	cs := clientset(t, cfg)
	ctx := context.Background()
	ns := createNamespace(t, cs, "proto")

	pod, err := cs.CoreV1().Pods(ns).Create(ctx, testPod(ns, "p", map[string]string{"app": "p"}), metav1.CreateOptions{})
	must(t, err, "protobuf create pod")
	if pod.UID == "" || pod.Spec.Containers[0].Image != "busybox:1.36" {
		t.Errorf("protobuf create returned %+v", pod)
	}
	got, err := cs.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	must(t, err, "protobuf get pod")
	if got.UID != pod.UID || got.Labels["app"] != "p" || got.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("protobuf get returned %+v", got.ObjectMeta)
	}
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "protobuf list pods")
	if len(list.Items) != 1 || list.ResourceVersion == "" {
		t.Errorf("protobuf list: %d items rv %q", len(list.Items), list.ResourceVersion)
	}
	dep, err := cs.AppsV1().Deployments(ns).Create(ctx, testDeployment(ns, "web", 2), metav1.CreateOptions{})
	must(t, err, "protobuf create deployment")
	if *dep.Spec.Replicas != 2 {
		t.Errorf("protobuf deployment replicas %d", *dep.Spec.Replicas)
	}

	checkProtobuf(t, log.get())
	log.reset()

	// Only pod p: the Deployment's controller creates pods in ns meanwhile.
	onlyP := metav1.ListOptions{ResourceVersion: list.ResourceVersion, FieldSelector: "metadata.name=p"}
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, onlyP)
	must(t, err, "protobuf watch")
	defer w.Stop()
	got.Labels["v"] = "2"
	_, err = cs.CoreV1().Pods(ns).Update(ctx, got, metav1.UpdateOptions{})
	must(t, err, "protobuf update")
	must(t, cs.CoreV1().Pods(ns).Delete(ctx, "p", metav1.DeleteOptions{}), "protobuf delete")
	select {
	case ev := <-w.ResultChan():
		if ev.Type == watch.Error {
			t.Fatalf("protobuf watch: %v", apierrors.FromObject(ev.Object))
		}
		checkProtobuf(t, log.get())
		w.Stop()
	case <-time.After(waitTimeout):
		t.Fatalf("no watch event")
	}
	w, err = cs.CoreV1().Pods(ns).Watch(ctx, onlyP)
	must(t, err, "protobuf watch")
	defer w.Stop()
	evs := collectEvents(t, w, 2)
	if evs[0].Type != watch.Modified || evs[0].Object.(*corev1.Pod).Labels["v"] != "2" || evs[1].Type != watch.Deleted {
		t.Errorf("protobuf watch events %s %s", evs[0].Type, evs[1].Type)
	}
	checkProtobuf(t, log.get())

	// A default (protobuf) informer syncs and follows changes.
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	fctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(fctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("protobuf informer did not sync")
	}
	_, err = cs.CoreV1().Pods(ns).Create(ctx, testPod(ns, "later", nil), metav1.CreateOptions{})
	must(t, err, "create later")
	eventually(t, "the protobuf informer to see the new pod", func() bool {
		_, ok, _ := inf.GetStore().GetByKey(ns + "/later")
		return ok
	})
}

// checkProtobuf fails t unless every recorded pod/deployment request asked
// for protobuf and got it (watches: ;stream=watch), and sent protobuf
// bodies.
func checkProtobuf(t testing.TB, reqs []recordedRequest) {
	t.Helper()
	for _, r := range reqs {
		if !strings.Contains(r.Path, "/pods") && !strings.Contains(r.Path, "/deployments") {
			continue
		}
		if !strings.HasPrefix(r.Accept, "application/vnd.kubernetes.protobuf") {
			t.Errorf("%s %s sent Accept %q", r.Method, r.Path, r.Accept)
		}
		if r.Method == http.MethodDelete {
			continue // a Status; either encoding is fine
		}
		if !strings.HasPrefix(r.RespContentType, "application/vnd.kubernetes.protobuf") {
			t.Errorf("%s %s?%s answered with Content-Type %q, want protobuf", r.Method, r.Path, r.RawQuery, r.RespContentType)
		}
		if strings.Contains(r.RawQuery, "watch=true") && !strings.Contains(r.RespContentType, "stream=watch") {
			t.Errorf("watch answered with Content-Type %q, want ...;stream=watch", r.RespContentType)
		}
		if (r.Method == http.MethodPost || r.Method == http.MethodPut) && r.ContentType != "application/vnd.kubernetes.protobuf" {
			t.Errorf("%s %s sent Content-Type %q", r.Method, r.Path, r.ContentType)
		}
	}
}

// testDeployment is a deployment of replicas busybox pods labelled app=name.
func testDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

// collectEvents reads n events from w, failing t after waitTimeout.
func collectEvents(t testing.TB, w watch.Interface, n int) []watch.Event {
	t.Helper()
	var evs []watch.Event
	timeout := time.After(waitTimeout)
	for len(evs) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %d of %d events", len(evs), n)
			}
			if ev.Type == watch.Error {
				t.Fatalf("watch error event: %v", apierrors.FromObject(ev.Object))
			}
			if ev.Type == watch.Bookmark {
				// keep only initial-events-end bookmarks, not periodic ones
				if m, ok := ev.Object.(metav1.Object); !ok || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
					continue
				}
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("timed out after %d of %d watch events", len(evs), n)
		}
	}
	return evs
}

// itemNames are the names of config maps in list order.
func itemNames(items []corev1.ConfigMap) []string {
	var names []string
	for _, i := range items {
		names = append(names, i.Name)
	}
	return names
}

func podNames(items []corev1.Pod) []string {
	var names []string
	for _, i := range items {
		names = append(names, i.Name)
	}
	return names
}

func containerNames(cs []corev1.Container) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// statusOf is the metav1.Status of an API error.
func statusOf(err error) metav1.Status {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status()
	}
	return metav1.Status{}
}

func statusCode(err error) int32 { return statusOf(err).Code }

func hasCause(causes []metav1.StatusCause, typ metav1.CauseType, field string) bool {
	for _, c := range causes {
		if c.Type == typ && c.Field == field {
			return true
		}
	}
	return false
}

// rvLess compares resourceVersions as numbers (skiff's, like etcd's, are).
func rvLess(a, b string) bool {
	x, _ := strconv.ParseUint(a, 10, 64)
	y, _ := strconv.ParseUint(b, 10, 64)
	return x < y
}
