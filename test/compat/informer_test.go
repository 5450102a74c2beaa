package compat

// client-go informers against skiff, and client-go's and skiff's
// SharedIndexInformers side by side on the same resource.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	skiffclient "github.com/skiff-sh/skiff/pkg/client"
	skiffcache "github.com/skiff-sh/skiff/pkg/client/cache"
)

// handlerEvent is one notification a handler got.
type handlerEvent struct {
	Kind      string // add, update, delete
	Key       string
	OldRV, RV string
	Initial   bool // add: isInInitialList
	Tombstone bool // delete: DeletedFinalStateUnknown
}

func (e handlerEvent) String() string {
	s := e.Kind + " " + e.Key + " "
	if e.OldRV != "" {
		s += e.OldRV + "->"
	}
	s += e.RV
	if e.Initial {
		s += " initial"
	}
	if e.Tombstone {
		s += " tombstone"
	}
	return s
}

// eventLog records what one handler was told, in order.
type eventLog struct {
	mu  sync.Mutex
	evs []handlerEvent
}

func (l *eventLog) add(e handlerEvent) {
	l.mu.Lock()
	l.evs = append(l.evs, e)
	l.mu.Unlock()
}

func (l *eventLog) get() []handlerEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.evs)
}

func (l *eventLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.evs)
}

// byKey groups the events by object key, keeping their order.
func byKey(evs []handlerEvent) map[string][]string {
	m := map[string][]string{}
	for _, e := range evs {
		m[e.Key] = append(m[e.Key], e.String())
	}
	return m
}

func keyRV(obj any) (key, rv string) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("<%T>", obj), ""
	}
	key = m.GetName()
	if m.GetNamespace() != "" {
		key = m.GetNamespace() + "/" + key
	}
	return key, m.GetResourceVersion()
}

// added, updated and deleted record one notification; deleted takes the
// tombstone's key and last state when the object is one.
func (l *eventLog) added(obj any, initial bool) {
	k, rv := keyRV(obj)
	l.add(handlerEvent{Kind: "add", Key: k, RV: rv, Initial: initial})
}

func (l *eventLog) updated(o, n any) {
	k, rv := keyRV(n)
	_, orv := keyRV(o)
	l.add(handlerEvent{Kind: "update", Key: k, OldRV: orv, RV: rv})
}

func (l *eventLog) deleted(obj any, tombstoneKey string, tombstone bool) {
	k, rv := keyRV(obj)
	if tombstone {
		k = tombstoneKey
	}
	l.add(handlerEvent{Kind: "delete", Key: k, RV: rv, Tombstone: tombstone})
}

// clientGoHandler records client-go notifications into l.
func clientGoHandler(l *eventLog) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    l.added,
		UpdateFunc: l.updated,
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				l.deleted(t.Obj, t.Key, true)
				return
			}
			l.deleted(obj, "", false)
		},
	}
}

// skiffHandler records skiff notifications into l.
func skiffHandler(l *eventLog) skiffcache.ResourceEventHandler {
	return skiffcache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    l.added,
		UpdateFunc: l.updated,
		DeleteFunc: func(obj any) {
			if t, ok := obj.(skiffcache.DeletedFinalStateUnknown); ok {
				l.deleted(t.Obj, t.Key, true)
				return
			}
			l.deleted(obj, "", false)
		},
	}
}

// storeRVs maps each cached object's key to its resourceVersion.
func storeRVs(objs []any) map[string]string {
	m := map[string]string{}
	for _, o := range objs {
		k, rv := keyRV(o)
		m[k] = rv
	}
	return m
}

// serverConfigMaps is the server's truth: key -> resourceVersion.
func serverConfigMaps(t testing.TB, cs kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	list, err := cs.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	must(t, err, "list configmaps")
	m := map[string]string{}
	for i := range list.Items {
		m[ns+"/"+list.Items[i].Name] = list.Items[i].ResourceVersion
	}
	return m
}

// TestClientGoInformerFactory: a client-go SharedInformerFactory (pods and
// config maps) syncs against skiff, its listers answer, and its handlers
// see adds, updates and deletes in order.
func TestClientGoInformerFactory(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	ctx := context.Background()
	ns := createNamespace(t, cs, "factory")
	for i := range 2 {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, testPod(ns, fmt.Sprintf("p%d", i), map[string]string{"app": "x"}), metav1.CreateOptions{})
		must(t, err, "create p%d", i)
	}
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, testConfigMap(ns, "c0", nil, nil), metav1.CreateOptions{})
	must(t, err, "create c0")
	// Something in another namespace the factory must not see.
	other := createNamespace(t, cs, "elsewhere")
	_, err = cs.CoreV1().Pods(other).Create(ctx, testPod(other, "hidden", nil), metav1.CreateOptions{})
	must(t, err, "create hidden")

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	podInf := factory.Core().V1().Pods()
	cmInf := factory.Core().V1().ConfigMaps()
	var podLog, cmLog eventLog
	podReg, err := podInf.Informer().AddEventHandler(clientGoHandler(&podLog))
	must(t, err, "add pod handler")
	cmReg, err := cmInf.Informer().AddEventHandler(clientGoHandler(&cmLog))
	must(t, err, "add configmap handler")
	fctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(fctx.Done())
	wctx, wcancel := context.WithTimeout(ctx, waitTimeout)
	defer wcancel()
	for typ, ok := range factory.WaitForCacheSync(wctx.Done()) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	if !cache.WaitForCacheSync(wctx.Done(), podReg.HasSynced, cmReg.HasSynced) {
		t.Fatal("handlers did not sync")
	}
	pods, err := podInf.Lister().Pods(ns).List(labels.Everything())
	must(t, err, "pod lister")
	if len(pods) != 2 {
		t.Errorf("pod lister has %d pods after sync, want 2", len(pods))
	}

	p0, err := podInf.Lister().Pods(ns).Get("p0")
	must(t, err, "lister get p0")
	p0 = p0.DeepCopy()
	p0.Labels["v"] = "2"
	up0, err := cs.CoreV1().Pods(ns).Update(ctx, p0, metav1.UpdateOptions{})
	must(t, err, "update p0")
	must(t, cs.CoreV1().Pods(ns).Delete(ctx, "p1", metav1.DeleteOptions{}), "delete p1")
	p2, err := cs.CoreV1().Pods(ns).Create(ctx, testPod(ns, "p2", map[string]string{"app": "x"}), metav1.CreateOptions{})
	must(t, err, "create p2")
	c1, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, testConfigMap(ns, "c1", nil, nil), metav1.CreateOptions{})
	must(t, err, "create c1")
	must(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "c0", metav1.DeleteOptions{}), "delete c0")

	eventually(t, "pod events", func() bool { return podLog.len() >= 5 })
	eventually(t, "configmap events", func() bool { return cmLog.len() >= 4 })
	pk := byKey(podLog.get())
	wantP0 := []string{fmt.Sprintf("add %s/p0 %s initial", ns, p0.ResourceVersion), fmt.Sprintf("update %s/p0 %s->%s", ns, p0.ResourceVersion, up0.ResourceVersion)}
	if !slices.Equal(pk[ns+"/p0"], wantP0) {
		t.Errorf("p0 events %v, want %v", pk[ns+"/p0"], wantP0)
	}
	if ev := pk[ns+"/p1"]; len(ev) != 2 || !strings.HasPrefix(ev[0], "add ") || !strings.HasPrefix(ev[1], "delete "+ns+"/p1 ") {
		t.Errorf("p1 events %v, want add then delete", ev)
	}
	if want := []string{fmt.Sprintf("add %s/p2 %s", ns, p2.ResourceVersion)}; !slices.Equal(pk[ns+"/p2"], want) {
		t.Errorf("p2 events %v, want %v", pk[ns+"/p2"], want)
	}
	if _, ok := pk[other+"/hidden"]; ok {
		t.Errorf("the namespaced factory saw a pod of another namespace")
	}
	ck := byKey(cmLog.get())
	if want := []string{fmt.Sprintf("add %s/c1 %s", ns, c1.ResourceVersion)}; !slices.Equal(ck[ns+"/c1"], want) {
		t.Errorf("c1 events %v, want %v", ck[ns+"/c1"], want)
	}
	if ev := ck[ns+"/c0"]; len(ev) != 2 || !strings.HasSuffix(ev[0], " initial") || !strings.HasPrefix(ev[1], "delete ") {
		t.Errorf("c0 events %v, want an initial add then a delete", ev)
	}
	if ev := ck[ns+"/"+rootCA]; len(ev) != 1 || !strings.HasSuffix(ev[0], " initial") {
		t.Errorf("%s events %v, want one initial add", rootCA, ev)
	}

	eventually(t, "the pod lister to follow", func() bool {
		pods, _ := podInf.Lister().Pods(ns).List(labels.Everything())
		return len(pods) == 2
	})
	sel, _ := labels.Parse("v=2")
	if got, _ := podInf.Lister().List(sel); len(got) != 1 || got[0].Name != "p0" {
		t.Errorf("lister with selector v=2 = %d pods", len(got))
	}
}

// TestInformersMatchSkiff runs client-go's SharedIndexInformer (via its
// factory, so in watch-list mode, the v0.37 default) and skiff's (list +
// watch, and watch-list) on the same config maps and requires the same
// final caches (TypeMeta aside) and the same per-key event sequences.
func TestInformersMatchSkiff(t *testing.T) {
	t.Parallel()
	env := startEnv(t)
	cs := clientset(t, restConfig(t, env))
	sc := skiffClient(t, env)
	ctx := context.Background()
	ns := createNamespace(t, cs, "match")
	cms := cs.CoreV1().ConfigMaps(ns)
	for _, n := range []string{"a", "b", "c"} {
		_, err := cms.Create(ctx, testConfigMap(ns, n, map[string]string{"k": n}, map[string]string{"v": "0"}), metav1.CreateOptions{})
		must(t, err, "create %s", n)
	}

	type informer struct {
		name   string
		log    *eventLog
		store  func() []any
		synced func() bool
	}
	var infs []informer

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	cg := factory.Core().V1().ConfigMaps().Informer()
	cgLog := &eventLog{}
	cgReg, err := cg.AddEventHandler(clientGoHandler(cgLog))
	must(t, err, "client-go handler")
	infs = append(infs, informer{"client-go", cgLog, cg.GetStore().List, cgReg.HasSynced})
	fctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); factory.Shutdown(); wg.Wait() }()
	factory.Start(fctx.Done())

	for _, watchList := range []bool{false, true} {
		typed := skiffclient.For[*corev1.ConfigMap, *corev1.ConfigMapList](sc).Namespace(ns)
		inf := skiffcache.NewSharedIndexInformerWithOptions(skiffcache.NewListWatchFromTyped(typed, nil), &corev1.ConfigMap{},
			skiffcache.SharedIndexInformerOptions{Reflector: skiffcache.ReflectorOptions{UseWatchList: watchList}})
		l := &eventLog{}
		reg, err := inf.AddEventHandler(skiffHandler(l))
		must(t, err, "skiff handler")
		name := "skiff list+watch"
		if watchList {
			name = "skiff watch-list"
		}
		infs = append(infs, informer{name, l, inf.GetStore().List, reg.HasSynced})
		wg.Go(func() { inf.Run(fctx) })
	}
	for _, inf := range infs {
		eventually(t, inf.name+" to sync", inf.synced)
	}
	initial := map[string]int{}
	for _, inf := range infs {
		initial[inf.name] = inf.log.len()
	}

	// The script: every step is one watch event.
	type step struct {
		name string
		do   func() error
	}
	update := func(name string, mutate func(*corev1.ConfigMap)) func() error {
		return func() error {
			cm, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			mutate(cm)
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		}
	}
	create := func(name string) func() error {
		return func() error {
			_, err := cms.Create(ctx, testConfigMap(ns, name, map[string]string{"k": name}, nil), metav1.CreateOptions{})
			return err
		}
	}
	del := func(name string) func() error {
		return func() error { return cms.Delete(ctx, name, metav1.DeleteOptions{}) }
	}
	steps := []step{
		{"create d", create("d")},
		{"create e", create("e")},
		{"update a", update("a", func(c *corev1.ConfigMap) { c.Data["v"] = "1" })},
		{"update a again", update("a", func(c *corev1.ConfigMap) { c.Data["v"] = "2" })},
		{"relabel b", update("b", func(c *corev1.ConfigMap) { c.Labels["k"] = "bb" })},
		{"delete c", del("c")},
		{"delete d", del("d")},
		{"recreate c", create("c")},
		{"update e", update("e", func(c *corev1.ConfigMap) { c.Data = map[string]string{"x": "y"} })},
		{"delete a", del("a")},
		{"update c", update("c", func(c *corev1.ConfigMap) { c.Annotations = map[string]string{"note": "new"} })},
		// Last, a sentinel: every event of the steps above comes before
		// its add in each informer's handler log, so once every log has
		// it no event of the script can still be on its way.
		{"create the sentinel", create("zz-sentinel")},
	}
	for _, s := range steps {
		must(t, s.do(), "%s", s.name)
	}
	truth := serverConfigMaps(t, cs, ns)
	for _, inf := range infs {
		eventually(t, inf.name+" to reach the server's state", func() bool {
			return maps.Equal(storeRVs(inf.store()), truth) && slices.ContainsFunc(inf.log.get(), func(e handlerEvent) bool {
				return e.Kind == "add" && e.Key == ns+"/zz-sentinel"
			})
		})
	}

	ref := infs[0]
	refEvents := ref.log.get()
	refKeys := byKey(refEvents)
	for _, inf := range infs[1:] {
		evs := inf.log.get()
		if k := byKey(evs); !maps.EqualFunc(k, refKeys, slices.Equal) {
			for key := range mergeKeys(k, refKeys) {
				if !slices.Equal(k[key], refKeys[key]) {
					t.Errorf("%s: events of %s differ:\n  %-16s %v\n  %-16s %v", inf.name, key, ref.name, refKeys[key], inf.name, k[key])
				}
			}
		}
		// The global order may differ, and that is not an error: skiff's
		// informer queues per key (DeltaFIFO), so a key with several
		// pending changes has them delivered together at its first place
		// in the queue; client-go >= 1.36 (InOrderInformers, locked on)
		// delivers in watch order. Per key, the order is the same.
		if !slices.Equal(evs[initial[inf.name]:], refEvents[initial[ref.name]:]) {
			t.Logf("%s: global order of post-sync events differs (per-key order agrees):\n  %-16s %v\n  %-16s %v", inf.name, ref.name, refEvents[initial[ref.name]:], inf.name, evs[initial[inf.name]:])
		}
		// Same cached objects, field by field.
		refObjs := map[string]any{}
		for _, o := range ref.store() {
			k, _ := keyRV(o)
			refObjs[k] = o
		}
		// TypeMeta is compared apart: client-go's decoder clears it on
		// typed objects, skiff's client keeps what the server sent.
		typeMetaDiffers := 0
		for _, o := range inf.store() {
			k, _ := keyRV(o)
			ours, theirs := o.(*corev1.ConfigMap), refObjs[k].(*corev1.ConfigMap)
			if ours.TypeMeta != theirs.TypeMeta {
				if typeMetaDiffers == 0 {
					t.Logf("%s: cached %s has TypeMeta %+v, client-go's %+v", inf.name, k, ours.TypeMeta, theirs.TypeMeta)
				}
				typeMetaDiffers++
			}
			ours, theirs = ours.DeepCopy(), theirs.DeepCopy()
			ours.TypeMeta, theirs.TypeMeta = metav1.TypeMeta{}, metav1.TypeMeta{}
			if !apiequality.Semantic.DeepEqual(ours, theirs) {
				t.Errorf("%s: cached %s differs from client-go's:\n  %#v\n  %#v", inf.name, k, ours, theirs)
			}
		}
		if typeMetaDiffers > 0 {
			t.Logf("%s: %d cached objects keep Kind/APIVersion, which client-go clears", inf.name, typeMetaDiffers)
		}
	}
	// client-go delivers in watch (resourceVersion) order.
	post := refEvents[initial[ref.name]:]
	for i := 1; i < len(post); i++ {
		if !rvLess(post[i-1].RV, post[i].RV) {
			t.Errorf("client-go delivered %v before %v", post[i-1], post[i])
		}
	}
	// The shape of the reference sequence itself.
	for key, want := range map[string][]string{
		ns + "/a": {"add", "update", "update", "delete"},
		ns + "/b": {"add", "update"},
		ns + "/c": {"add", "delete", "add", "update"},
		ns + "/d": {"add", "delete"},
		ns + "/e": {"add", "update"},
	} {
		var kinds []string
		for _, s := range refKeys[key] {
			kinds = append(kinds, strings.Fields(s)[0])
		}
		if !slices.Equal(kinds, want) {
			t.Errorf("client-go events of %s: %v, want kinds %v", key, refKeys[key], want)
		}
	}
}

func mergeKeys(a, b map[string][]string) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// watchListGate overrides client-go's WatchListClient feature gate.
type watchListGate struct {
	base    features.Gates
	enabled bool
}

func (g watchListGate) Enabled(f features.Feature) bool {
	if f == features.WatchListClient {
		return g.enabled
	}
	return g.base.Enabled(f)
}

// TestClientGoWatchListGate: with WatchListClient on, client-go's informer
// syncs from one sendInitialEvents=true watch and never lists; with it
// off, it lists and watches. Not parallel: it swaps client-go's global
// feature gates (parallel tests only start after it has finished).
func TestClientGoWatchListGate(t *testing.T) {
	base := features.FeatureGates()
	t.Cleanup(func() { features.ReplaceFeatureGates(base) })
	env := startEnv(t)
	cfg := restConfig(t, env)
	var log requestLog
	cfg.Wrap(log.wrap)
	logged := clientset(t, cfg)            // the informers'
	cs := clientset(t, restConfig(t, env)) // the test's own, not logged
	ctx := context.Background()
	ns := createNamespace(t, cs, "watchlist")
	for i := range 5 {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, testPod(ns, fmt.Sprintf("p%d", i), nil), metav1.CreateOptions{})
		must(t, err, "create p%d", i)
	}
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprintf("WatchListClient=%v", enabled), func(t *testing.T) {
			features.ReplaceFeatureGates(watchListGate{base: base, enabled: enabled})
			log.reset()
			factory := informers.NewSharedInformerFactoryWithOptions(logged, 0, informers.WithNamespace(ns))
			inf := factory.Core().V1().Pods().Informer()
			var l eventLog
			reg, err := inf.AddEventHandler(clientGoHandler(&l))
			must(t, err, "handler")
			fctx, cancel := context.WithCancel(ctx)
			defer func() { cancel(); factory.Shutdown() }()
			factory.Start(fctx.Done())
			wctx, wcancel := context.WithTimeout(ctx, waitTimeout)
			defer wcancel()
			if !cache.WaitForCacheSync(wctx.Done(), inf.HasSynced, reg.HasSynced) {
				t.Fatal("informer did not sync")
			}
			onServer, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			must(t, err, "list pods")
			if n := len(inf.GetStore().ListKeys()); n != len(onServer.Items) {
				t.Errorf("cache has %d pods, want %d", n, len(onServer.Items))
			}
			for _, e := range l.get() {
				if e.Kind != "add" || !e.Initial {
					t.Errorf("initial event %v, want an initial add", e)
				}
			}
			// It keeps following changes.
			_, err = cs.CoreV1().Pods(ns).Create(ctx, testPod(ns, fmt.Sprintf("late-%v", enabled), nil), metav1.CreateOptions{})
			must(t, err, "create late pod")
			eventually(t, "the late pod", func() bool { return l.len() == len(onServer.Items)+1 })

			var lists, watchLists, watches int
			for _, r := range log.get() {
				if r.Path != "/api/v1/namespaces/"+ns+"/pods" || r.Method != "GET" {
					continue
				}
				switch {
				case strings.Contains(r.RawQuery, "sendInitialEvents=true"):
					watchLists++
					for _, p := range []string{"watch=true", "allowWatchBookmarks=true", "resourceVersionMatch=NotOlderThan"} {
						if !strings.Contains(r.RawQuery, p) {
							t.Errorf("watch-list request %q lacks %s", r.RawQuery, p)
						}
					}
					if r.Status != 200 {
						t.Errorf("watch-list request answered %d", r.Status)
					}
				case strings.Contains(r.RawQuery, "watch=true"):
					watches++
				default:
					lists++
				}
			}
			if enabled && (watchLists != 1 || lists != 0) {
				t.Errorf("watch-list mode: %d watch-list requests and %d lists, want 1 and 0 (requests: %+v)", watchLists, lists, log.get())
			}
			if !enabled && (watchLists != 0 || lists != 1 || watches != 1) {
				t.Errorf("list+watch mode: %d watch-list requests, %d lists, %d watches; want 0, 1, 1", watchLists, lists, watches)
			}
		})
	}
}
