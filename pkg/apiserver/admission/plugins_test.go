package admission

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/clock"
)

// fakeGetter serves LimitRanges from memory.
type fakeGetter struct {
	ranges []runtime.Object
	err    error
	// live is what a live lookup finds (ranges not yet in the cache);
	// liveCalls counts the lookups.
	live      []runtime.Object
	liveCalls int
}

func (g *fakeGetter) ListConsistent(_ context.Context, gr schema.GroupResource, _ string) ([]runtime.Object, error) {
	if gr != grLimitRanges {
		return nil, errors.New("unexpected list of " + gr.String())
	}
	g.liveCalls++
	if g.err != nil {
		return nil, g.err
	}
	return append(append([]runtime.Object(nil), g.ranges...), g.live...), nil
}

func (g *fakeGetter) Get(context.Context, schema.GroupResource, string, string) (runtime.Object, error) {
	return nil, errors.New("not implemented")
}

func (g *fakeGetter) GetConsistent(context.Context, schema.GroupResource, string, string) (runtime.Object, error) {
	return nil, errors.New("not implemented")
}

func (g *fakeGetter) List(_ context.Context, gr schema.GroupResource, _ string) ([]runtime.Object, error) {
	if gr != grLimitRanges {
		return nil, errors.New("unexpected list of " + gr.String())
	}
	return g.ranges, g.err
}

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func limitRange(name string, items ...corev1.LimitRangeItem) *corev1.LimitRange {
	return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: corev1.LimitRangeSpec{Limits: items}}
}

func ctr(name string, requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Image: "nginx", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func podWith(name string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: corev1.PodSpec{Containers: containers}}
}

func claim(name string, requests corev1.ResourceList) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: requests},
		},
	}
}

func attrsFor(op Operation, obj, old runtime.Object) *Attributes {
	a := &Attributes{Operation: op, Namespace: "ns", Object: obj, OldObject: old}
	switch o := obj.(type) {
	case *corev1.Pod:
		a.Resource, a.Kind, a.Name = grPods, schema.GroupKind{Kind: "Pod"}, o.Name
	case *corev1.PersistentVolumeClaim:
		a.Resource, a.Kind, a.Name = grPVCs, schema.GroupKind{Kind: "PersistentVolumeClaim"}, o.Name
	}
	return a
}

func always() *corev1.ContainerRestartPolicy {
	p := corev1.ContainerRestartPolicyAlways
	return &p
}

// LimitRanger's validation: Container, Pod and PersistentVolumeClaim
// minimums, maximums and ratios, with upstream's messages and upstream's
// aggregation (one violation bare, several in brackets, repeats dropped).
func TestLimitRangerValidate(t *testing.T) {
	containerMax := corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1", "memory", "1Gi")}
	tests := []struct {
		name    string
		ranges  []runtime.Object
		attrs   *Attributes
		wantMsg string // "" = admitted
	}{
		{
			name:    "container within bounds",
			ranges:  []runtime.Object{limitRange("lr", containerMax)},
			attrs:   attrsFor(Create, podWith("ok", ctr("app", rl("cpu", "500m"), rl("cpu", "1", "memory", "1Gi"))), nil),
			wantMsg: "",
		},
		{
			name:    "container max: one violation has no brackets",
			ranges:  []runtime.Object{limitRange("lr", containerMax)},
			attrs:   attrsFor(Create, podWith("big", ctr("app", nil, rl("cpu", "2", "memory", "1Gi"))), nil),
			wantMsg: `pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2`,
		},
		{
			name:    "container max: several violations are bracketed",
			ranges:  []runtime.Object{limitRange("lr", containerMax)},
			attrs:   attrsFor(Create, podWith("big", ctr("app", nil, rl("cpu", "2", "memory", "2Gi"))), nil),
			wantMsg: `pods "big" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per Container is 1Gi, but limit is 2Gi]`,
		},
		{
			name:   "container max: the same violation twice is printed once",
			ranges: []runtime.Object{limitRange("lr", containerMax)},
			attrs: attrsFor(Create, podWith("twins",
				ctr("a", nil, rl("cpu", "2", "memory", "1Gi")), ctr("b", nil, rl("cpu", "2", "memory", "1Gi"))), nil),
			wantMsg: `pods "twins" is forbidden: maximum cpu usage per Container is 1, but limit is 2`,
		},
		{
			name:    "container max: request above the max",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")})},
			attrs:   attrsFor(Create, podWith("req", ctr("app", rl("cpu", "2"), rl("cpu", "1"))), nil),
			wantMsg: `pods "req" is forbidden: maximum cpu usage per Container is 1, but request is 2`,
		},
		{
			name:    "container max: no limit",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")})},
			attrs:   attrsFor(Create, podWith("nolimit", ctr("app", nil, nil)), nil),
			wantMsg: `pods "nolimit" is forbidden: maximum cpu usage per Container is 1.  No limit is specified`,
		},
		{
			name:    "container min: request below",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("memory", "64Mi")})},
			attrs:   attrsFor(Create, podWith("small", ctr("app", rl("memory", "32Mi"), nil)), nil),
			wantMsg: `pods "small" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi`,
		},
		{
			name:    "container min: limit below",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("memory", "64Mi")})},
			attrs:   attrsFor(Create, podWith("small", ctr("app", rl("memory", "64Mi"), rl("memory", "32Mi"))), nil),
			wantMsg: `pods "small" is forbidden: minimum memory usage per Container is 64Mi, but limit is 32Mi`,
		},
		{
			name:    "container min: no request",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("memory", "64Mi")})},
			attrs:   attrsFor(Create, podWith("none", ctr("app", nil, nil)), nil),
			wantMsg: `pods "none" is forbidden: minimum memory usage per Container is 64Mi.  No request is specified`,
		},
		{
			name:    "container ratio exceeded",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")})},
			attrs:   attrsFor(Create, podWith("bursty", ctr("app", rl("cpu", "250m"), rl("cpu", "1"))), nil),
			wantMsg: `pods "bursty" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000`,
		},
		{
			name:    "container ratio within",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")})},
			attrs:   attrsFor(Create, podWith("steady", ctr("app", rl("cpu", "500m"), rl("cpu", "1"))), nil),
			wantMsg: "",
		},
		{
			name:    "container ratio without request",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")})},
			attrs:   attrsFor(Create, podWith("noreq", ctr("app", nil, rl("cpu", "1"))), nil),
			wantMsg: `pods "noreq" is forbidden: cpu max limit to request ratio per Container is 2, but no request is specified or request is 0`,
		},
		{
			name:    "container ratio without limit",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")})},
			attrs:   attrsFor(Create, podWith("nolim", ctr("app", rl("cpu", "1"), nil)), nil),
			wantMsg: `pods "nolim" is forbidden: cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0`,
		},
		{
			name:   "init containers are checked after containers",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")})},
			attrs: attrsFor(Create, func() *corev1.Pod {
				p := podWith("init", ctr("app", nil, rl("cpu", "3")))
				p.Spec.InitContainers = []corev1.Container{ctr("setup", nil, rl("cpu", "2"))}
				return p
			}(), nil),
			wantMsg: `pods "init" is forbidden: [maximum cpu usage per Container is 1, but limit is 3, maximum cpu usage per Container is 1, but limit is 2]`,
		},
		{
			name:   "pod max over the sum of containers",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "1")})},
			attrs: attrsFor(Create, podWith("sum",
				ctr("a", rl("cpu", "100m"), rl("cpu", "600m")), ctr("b", rl("cpu", "100m"), rl("cpu", "600m"))), nil),
			wantMsg: `pods "sum" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m`,
		},
		{
			name:   "pod max: an init container larger than the sum counts",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("memory", "256Mi")})},
			attrs: attrsFor(Create, func() *corev1.Pod {
				p := podWith("initbig", ctr("a", nil, rl("memory", "100Mi")), ctr("b", nil, rl("memory", "100Mi")))
				p.Spec.InitContainers = []corev1.Container{ctr("setup", nil, rl("memory", "300Mi"))}
				return p
			}(), nil),
			wantMsg: `pods "initbig" is forbidden: maximum memory usage per Pod is 256Mi, but limit is 300Mi`,
		},
		{
			name:   "pod max: a smaller init container does not add up",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("memory", "256Mi")})},
			attrs: attrsFor(Create, func() *corev1.Pod {
				p := podWith("initsmall", ctr("a", nil, rl("memory", "100Mi")), ctr("b", nil, rl("memory", "100Mi")))
				p.Spec.InitContainers = []corev1.Container{ctr("setup", nil, rl("memory", "200Mi"))}
				return p
			}(), nil),
			wantMsg: "",
		},
		{
			name:   "pod max: sidecars add to the containers",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("memory", "256Mi")})},
			attrs: attrsFor(Create, func() *corev1.Pod {
				p := podWith("sidecar", ctr("a", nil, rl("memory", "200Mi")))
				side := ctr("proxy", nil, rl("memory", "100Mi"))
				side.RestartPolicy = always()
				p.Spec.InitContainers = []corev1.Container{side}
				return p
			}(), nil),
			wantMsg: `pods "sidecar" is forbidden: maximum memory usage per Pod is 256Mi, but limit is 300Mi`,
		},
		{
			name:   "pod max: an init container runs next to the sidecars before it",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("memory", "256Mi")})},
			attrs: attrsFor(Create, func() *corev1.Pod {
				p := podWith("sidecar2", ctr("a", nil, rl("memory", "10Mi")))
				side := ctr("proxy", nil, rl("memory", "100Mi"))
				side.RestartPolicy = always()
				p.Spec.InitContainers = []corev1.Container{side, ctr("migrate", nil, rl("memory", "200Mi"))}
				return p
			}(), nil),
			wantMsg: `pods "sidecar2" is forbidden: maximum memory usage per Pod is 256Mi, but limit is 300Mi`,
		},
		{
			name:   "pod min over the sum of requests",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Min: rl("cpu", "1")})},
			attrs: attrsFor(Create, podWith("tiny",
				ctr("a", rl("cpu", "200m"), nil), ctr("b", rl("cpu", "300m"), nil)), nil),
			wantMsg: `pods "tiny" is forbidden: minimum cpu usage per Pod is 1, but request is 500m`,
		},
		{
			name:   "pod ratio over the sums",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePod, MaxLimitRequestRatio: rl("memory", "2")})},
			attrs: attrsFor(Create, podWith("ratio",
				ctr("a", rl("memory", "100Mi"), rl("memory", "300Mi")), ctr("b", rl("memory", "100Mi"), rl("memory", "300Mi"))), nil),
			wantMsg: `pods "ratio" is forbidden: memory max limit to request ratio per Pod is 2, but provided ratio is 3.000000`,
		},
		{
			name:   "pod-level resources override the sum",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "2")})},
			attrs: attrsFor(Create, func() *corev1.Pod {
				p := podWith("podlevel", ctr("a", nil, rl("cpu", "1")))
				p.Spec.Resources = &corev1.ResourceRequirements{Limits: rl("cpu", "3")}
				return p
			}(), nil),
			wantMsg: `pods "podlevel" is forbidden: maximum cpu usage per Pod is 2, but limit is 3`,
		},
		{
			name: "container and pod items of one range aggregate",
			ranges: []runtime.Object{limitRange("lr",
				corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")},
				corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("cpu", "1")})},
			attrs:   attrsFor(Create, podWith("both", ctr("a", nil, rl("cpu", "2"))), nil),
			wantMsg: `pods "both" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum cpu usage per Pod is 1, but limit is 2]`,
		},
		{
			name: "the first violated range rejects alone",
			ranges: []runtime.Object{
				limitRange("a", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")}),
				limitRange("b", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("memory", "1Gi")}),
			},
			attrs:   attrsFor(Create, podWith("two", ctr("a", nil, rl("cpu", "2", "memory", "2Gi"))), nil),
			wantMsg: `pods "two" is forbidden: maximum cpu usage per Container is 1, but limit is 2`,
		},
		{
			name:    "pod items do not apply to claims",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("storage", "1Gi")})},
			attrs:   attrsFor(Create, claim("data", rl("storage", "5Gi")), nil),
			wantMsg: "",
		},
		{
			name:    "pod update is not checked",
			ranges:  []runtime.Object{limitRange("lr", containerMax)},
			attrs:   attrsFor(Update, podWith("big", ctr("app", nil, rl("cpu", "2"))), podWith("big", ctr("app", nil, rl("cpu", "2")))),
			wantMsg: "",
		},
		{
			name:   "subresources are not checked",
			ranges: []runtime.Object{limitRange("lr", containerMax)},
			attrs: func() *Attributes {
				a := attrsFor(Create, podWith("big", ctr("app", nil, rl("cpu", "2"))), nil)
				a.Subresource = "status"
				return a
			}(),
			wantMsg: "",
		},
		{
			name:    "claim max",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi")})},
			attrs:   attrsFor(Create, claim("huge", rl("storage", "20Gi")), nil),
			wantMsg: `persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`,
		},
		{
			name:    "claim min",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi")})},
			attrs:   attrsFor(Create, claim("wee", rl("storage", "500Mi")), nil),
			wantMsg: `persistentvolumeclaims "wee" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`,
		},
		{
			name:    "claim without a request",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi")})},
			attrs:   attrsFor(Create, claim("unsized", nil), nil),
			wantMsg: `persistentvolumeclaims "unsized" is forbidden: [minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified]`,
		},
		{
			name:   "claim limits are not requests",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Max: rl("storage", "10Gi")})},
			attrs: attrsFor(Create, func() *corev1.PersistentVolumeClaim {
				c := claim("lim", rl("storage", "1Gi"))
				c.Spec.Resources.Limits = rl("storage", "50Gi")
				return c
			}(), nil),
			wantMsg: "",
		},
		{
			name:    "claim within bounds",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi")})},
			attrs:   attrsFor(Create, claim("fine", rl("storage", "5Gi")), nil),
			wantMsg: "",
		},
		{
			name:    "claim update is checked",
			ranges:  []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Max: rl("storage", "10Gi")})},
			attrs:   attrsFor(Update, claim("grow", rl("storage", "20Gi")), claim("grow", rl("storage", "5Gi"))),
			wantMsg: `persistentvolumeclaims "grow" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi`,
		},
		{
			name:   "a claim being deleted is not checked",
			ranges: []runtime.Object{limitRange("lr", corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Max: rl("storage", "10Gi")})},
			attrs: attrsFor(Update, claim("going", rl("storage", "20Gi")), func() *corev1.PersistentVolumeClaim {
				c := claim("going", rl("storage", "20Gi"))
				now := metav1.Now()
				c.DeletionTimestamp = &now
				return c
			}()),
			wantMsg: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &limitRanger{d: Deps{Getter: &fakeGetter{ranges: tt.ranges}}}
			if !p.Handles(tt.attrs.Operation) {
				t.Fatalf("LimitRanger does not handle %s", tt.attrs.Operation)
			}
			err := p.Validate(context.Background(), tt.attrs)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("admitted, want %q", tt.wantMsg)
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v, want a StatusError", err, err)
			}
			st := se.Status()
			if st.Code != http.StatusForbidden || st.Reason != metav1.StatusReasonForbidden {
				t.Errorf("code %d reason %q, want 403 Forbidden", st.Code, st.Reason)
			}
			if st.Message != tt.wantMsg {
				t.Errorf("message\n  %q\nwant\n  %q", st.Message, tt.wantMsg)
			}
		})
	}
}

// A LimitRange lookup failure rejects the request as upstream does.
func TestLimitRangerListFailure(t *testing.T) {
	p := &limitRanger{d: Deps{Getter: &fakeGetter{err: errors.New("boom")}}}
	err := p.Validate(context.Background(), attrsFor(Create, claim("data", rl("storage", "1Gi")), nil))
	want := `persistentvolumeclaims "data" is forbidden: unable to CREATE /v1, Resource=persistentvolumeclaims at this time because there was an error enforcing limit ranges`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("error %v, want forbidden %q", err, want)
	}
}

// LimitRanger's defaults: requests and limits a container lacks, and the
// annotation naming them in upstream's format.
func TestLimitRangerAdmitDefaults(t *testing.T) {
	defaults := limitRange("defaults", corev1.LimitRangeItem{
		Type:           corev1.LimitTypeContainer,
		Default:        rl("cpu", "500m", "memory", "256Mi"),
		DefaultRequest: rl("cpu", "100m", "memory", "128Mi"),
	})
	tests := []struct {
		name           string
		pod            *corev1.Pod
		wantAnnotation string // "" = none
		check          func(t *testing.T, p *corev1.Pod)
	}{
		{
			name:           "everything defaulted",
			pod:            podWith("bare", ctr("app", nil, nil)),
			wantAnnotation: "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app",
			check: func(t *testing.T, p *corev1.Pod) {
				r := p.Spec.Containers[0].Resources
				if r.Requests.Cpu().String() != "100m" || r.Requests.Memory().String() != "128Mi" ||
					r.Limits.Cpu().String() != "500m" || r.Limits.Memory().String() != "256Mi" {
					t.Errorf("resources %v, want the defaults", r)
				}
			},
		},
		{
			name: "own values kept, init containers named as such",
			pod: func() *corev1.Pod {
				p := podWith("mixed", ctr("app", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "2")))
				p.Spec.InitContainers = []corev1.Container{ctr("setup", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))}
				return p
			}(),
			wantAnnotation: "LimitRanger plugin set: memory limit for container app",
			check: func(t *testing.T, p *corev1.Pod) {
				r := p.Spec.Containers[0].Resources
				if r.Requests.Cpu().String() != "1" || r.Limits.Cpu().String() != "2" || r.Limits.Memory().String() != "256Mi" {
					t.Errorf("resources %v", r)
				}
			},
		},
		{
			name: "init container defaulted",
			pod: func() *corev1.Pod {
				p := podWith("init", ctr("app", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi")))
				p.Spec.InitContainers = []corev1.Container{ctr("setup", rl("memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))}
				return p
			}(),
			wantAnnotation: "LimitRanger plugin set: cpu request for init container setup",
		},
		{
			name:           "nothing to set, no annotation",
			pod:            podWith("full", ctr("app", rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))),
			wantAnnotation: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &limitRanger{d: Deps{Getter: &fakeGetter{ranges: []runtime.Object{defaults}}}}
			if err := p.Admit(context.Background(), attrsFor(Create, tt.pod, nil)); err != nil {
				t.Fatal(err)
			}
			got, ok := tt.pod.Annotations[limitRangerAnnotation]
			if ok != (tt.wantAnnotation != "") || got != tt.wantAnnotation {
				t.Errorf("annotation %q (set %v), want %q", got, ok, tt.wantAnnotation)
			}
			if tt.check != nil {
				tt.check(t, tt.pod)
			}
		})
	}
}

// TestLimitRangerLiveLookup: a LimitRange created a moment ago that the
// watch cache does not have yet still applies (a live lookup when the
// cache has none in the namespace), and the lookup's result is reused for
// 30 seconds, as upstream's LimitRanger does.
func TestLimitRangerLiveLookup(t *testing.T) {
	defaults := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: "ns"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, DefaultRequest: rl("cpu", "250m")}}}}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	g := &fakeGetter{live: []runtime.Object{defaults}}
	p := &limitRanger{d: Deps{Getter: g, Clock: clk}}
	admit := func() string {
		t.Helper()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
		if err := p.Admit(context.Background(), &Attributes{Operation: Create, Resource: grPods, Namespace: "ns", Object: pod}); err != nil {
			t.Fatal(err)
		}
		q := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
		return q.String()
	}
	if got := admit(); got != "250m" || g.liveCalls != 1 {
		t.Fatalf("first pod: cpu request %q after %d live lookups, want 250m after 1", got, g.liveCalls)
	}
	// Within the TTL the lookup is not repeated, even when what storage
	// holds changed.
	g.live = nil
	clk.Step(29 * time.Second)
	if got := admit(); got != "250m" || g.liveCalls != 1 {
		t.Fatalf("within 30s: cpu request %q after %d live lookups, want 250m after 1", got, g.liveCalls)
	}
	clk.Step(2 * time.Second)
	if got := admit(); got != "0" || g.liveCalls != 2 {
		t.Fatalf("after 30s: cpu request %q after %d live lookups, want none after 2", got, g.liveCalls)
	}
	// Ranges in the cache are used without a live lookup.
	g.ranges = []runtime.Object{defaults}
	if got := admit(); got != "250m" || g.liveCalls != 2 {
		t.Fatalf("cached: cpu request %q after %d live lookups, want 250m after 2", got, g.liveCalls)
	}
}
