package gc

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
	"github.com/skiff-sh/skiff/pkg/kubelet/sim"
)

type fakePods struct{ removable, terminated map[types.UID]bool }

func (f fakePods) ShouldPodContentBeRemoved(uid types.UID) bool { return f.removable[uid] }
func (f fakePods) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	return f.removable[uid] || f.terminated[uid]
}

type world struct {
	t   *testing.T
	ctx context.Context
	clk *clock.Fake
	rt  *sim.Runtime
	ids map[string]string // label → ID
}

func newWorld(t *testing.T) *world {
	clk := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return &world{t: t, ctx: context.Background(), clk: clk,
		rt: sim.New(sim.Config{Clock: clk, StartLatency: time.Second}), ids: map[string]string{}}
}

// sandbox runs a sandbox of pod uid whose containers exit after runFor
// ("" : they run until stopped).
func (w *world) sandbox(label, uid, runFor string) string {
	w.t.Helper()
	ann := map[string]string{}
	if runFor != "" {
		ann[sim.AnnotationRunDuration] = runFor
	}
	resp, err := w.rt.RunPodSandbox(w.ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: uid, Namespace: "default", Uid: uid},
		Labels:   map[string]string{cri.LabelPodUID: uid}, Annotations: ann}})
	if err != nil {
		w.t.Fatal(err)
	}
	w.ids[label] = resp.PodSandboxId
	w.clk.Step(time.Second)
	return resp.PodSandboxId
}

func (w *world) container(label, sandbox, uid, name string, attempt uint32, image string, start bool) {
	w.t.Helper()
	resp, err := w.rt.CreateContainer(w.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandbox, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt}, Image: &runtimeapi.ImageSpec{Image: image},
		Labels: map[string]string{cri.LabelPodUID: uid, cri.LabelContainerName: name}}})
	if err != nil {
		w.t.Fatal(err)
	}
	if start {
		if _, err := w.rt.StartContainer(w.ctx, &runtimeapi.StartContainerRequest{ContainerId: resp.ContainerId}); err != nil {
			w.t.Fatal(err)
		}
	}
	w.ids[label] = resp.ContainerId
	w.clk.Step(5 * time.Second)
}

// left are the labels of what the runtime still has.
func (w *world) left() []string {
	w.t.Helper()
	have := map[string]bool{}
	sbs, _ := w.rt.ListPodSandbox(w.ctx, &runtimeapi.ListPodSandboxRequest{})
	for _, s := range sbs.Items {
		have[s.Id] = true
	}
	cs, _ := w.rt.ListContainers(w.ctx, &runtimeapi.ListContainersRequest{})
	for _, c := range cs.Containers {
		have[c.Id] = true
	}
	var out []string
	for l, id := range w.ids {
		if have[id] {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func TestContainerGC(t *testing.T) {
	tests := []struct {
		name   string
		policy ContainerPolicy
		setup  func(w *world) fakePods
		want   string
	}{{
		name:   "the newest dead container of each name stays",
		policy: DefaultContainerPolicy(),
		setup: func(w *world) fakePods {
			s := w.sandbox("sb", "a", "2s")
			w.container("app-0", s, "a", "app", 0, "img", true)
			w.container("app-1", s, "a", "app", 1, "img", true)
			w.container("app-2", s, "a", "app", 2, "img", true)
			w.container("side-0", s, "a", "side", 0, "img", true)
			return fakePods{}
		},
		want: "app-2 sb side-0",
	}, {
		name:   "a running container and the dead one before it stay",
		policy: DefaultContainerPolicy(),
		setup: func(w *world) fakePods {
			s := w.sandbox("sb", "a", "")
			w.container("app-0", s, "a", "app", 0, "img", true)
			w.container("app-1", s, "a", "app", 1, "img", true)
			w.container("app-2", s, "a", "app", 2, "img", true)
			w.rt.StopContainer(w.ctx, &runtimeapi.StopContainerRequest{ContainerId: w.ids["app-0"]})
			w.rt.StopContainer(w.ctx, &runtimeapi.StopContainerRequest{ContainerId: w.ids["app-1"]})
			w.clk.Step(time.Second)
			return fakePods{}
		},
		want: "app-1 app-2 sb",
	}, {
		name:   "a container still starting does not push out the previous one",
		policy: DefaultContainerPolicy(),
		setup: func(w *world) fakePods {
			s := w.sandbox("sb", "a", "2s")
			w.container("app-0", s, "a", "app", 0, "img", true)
			w.container("app-1", s, "a", "app", 1, "img", false) // CREATED
			return fakePods{}
		},
		want: "app-0 app-1 sb",
	}, {
		name:   "a superseded CREATED container is dead",
		policy: DefaultContainerPolicy(),
		setup: func(w *world) fakePods {
			s := w.sandbox("sb", "a", "2s")
			w.container("app-0", s, "a", "app", 0, "img", true)
			w.container("app-1", s, "a", "app", 1, "img", false) // never started
			w.container("app-2", s, "a", "app", 2, "img", true)
			return fakePods{}
		},
		want: "app-2 sb",
	}, {
		name:   "everything dead of a removable pod goes, sandbox included",
		policy: DefaultContainerPolicy(),
		setup: func(w *world) fakePods {
			s := w.sandbox("sb", "gone", "2s")
			w.container("app-0", s, "gone", "app", 0, "img", true)
			w.container("app-1", s, "gone", "app", 1, "img", true)
			w.rt.StopPodSandbox(w.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s})
			return fakePods{removable: map[types.UID]bool{"gone": true}}
		},
		want: "",
	}, {
		name:   "a ready sandbox of a removable pod stays",
		policy: DefaultContainerPolicy(),
		setup: func(w *world) fakePods {
			w.sandbox("sb", "gone", "2s")
			return fakePods{removable: map[types.UID]bool{"gone": true}}
		},
		want: "sb",
	}, {
		name:   "old empty sandboxes go, the newest stays",
		policy: DefaultContainerPolicy(),
		setup: func(w *world) fakePods {
			s0 := w.sandbox("sb-0", "a", "")
			w.rt.StopPodSandbox(w.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s0})
			s1 := w.sandbox("sb-1", "a", "")
			w.rt.StopPodSandbox(w.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s1})
			s2 := w.sandbox("sb-2", "a", "")
			w.rt.StopPodSandbox(w.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s2})
			return fakePods{}
		},
		want: "sb-2",
	}, {
		name:   "an old sandbox holding the previous container stays",
		policy: DefaultContainerPolicy(),
		setup: func(w *world) fakePods {
			s0 := w.sandbox("sb-0", "a", "2s")
			w.container("app-0", s0, "a", "app", 0, "img", true)
			w.rt.StopPodSandbox(w.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s0})
			s1 := w.sandbox("sb-1", "a", "")
			w.container("app-1", s1, "a", "app", 1, "img", true)
			return fakePods{}
		},
		want: "app-0 app-1 sb-0 sb-1",
	}, {
		name:   "MinAge keeps young dead containers",
		policy: ContainerPolicy{MinAge: time.Minute, MaxPerPodContainer: 1, MaxContainers: -1},
		setup: func(w *world) fakePods {
			s := w.sandbox("sb", "a", "1s")
			w.container("app-0", s, "a", "app", 0, "img", true)
			w.container("app-1", s, "a", "app", 1, "img", true)
			w.clk.Step(2 * time.Minute)
			w.container("app-2", s, "a", "app", 2, "img", true)
			return fakePods{}
		},
		want: "app-1 app-2 sb",
	}, {
		name:   "MaxContainers bounds the node",
		policy: ContainerPolicy{MaxPerPodContainer: -1, MaxContainers: 2},
		setup: func(w *world) fakePods {
			s := w.sandbox("sb", "a", "1s")
			w.container("app-0", s, "a", "app", 0, "img", true)
			w.container("app-1", s, "a", "app", 1, "img", true)
			w.container("app-2", s, "a", "app", 2, "img", true)
			w.container("web-0", s, "a", "web", 0, "img", true)
			return fakePods{}
		},
		want: "app-2 sb web-0",
	}, {
		name:   "DeleteAllUnusedContainers clears terminated pods",
		policy: DefaultContainerPolicy(),
		setup: func(w *world) fakePods {
			s := w.sandbox("sb", "done", "1s")
			w.container("app-0", s, "done", "app", 0, "img", true)
			w.container("app-1", s, "done", "app", 1, "img", true)
			w.rt.StopPodSandbox(w.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s})
			return fakePods{terminated: map[types.UID]bool{"done": true}}
		},
		want: "",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			pods := tt.setup(w)
			w.clk.Step(10 * time.Second)
			g := &ContainerGC{Runtime: w.rt, Policy: tt.policy, Pods: pods, Clock: w.clk}
			var err error
			if strings.HasPrefix(tt.name, "DeleteAll") {
				err = g.DeleteAllUnusedContainers(w.ctx)
			} else {
				err = g.GarbageCollect(w.ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(w.left(), " "); got != tt.want {
				t.Errorf("left %q, want %q", got, tt.want)
			}
		})
	}
}

func TestContainerGCKeepsTerminatedPodsPrevious(t *testing.T) {
	// A terminated pod that is not deleted keeps its last container per
	// name in a normal pass.
	w := newWorld(t)
	s := w.sandbox("sb", "done", "1s")
	w.container("app-0", s, "done", "app", 0, "img", true)
	w.container("app-1", s, "done", "app", 1, "img", true)
	w.rt.StopPodSandbox(w.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s})
	g := &ContainerGC{Runtime: w.rt, Policy: DefaultContainerPolicy(), Clock: w.clk,
		Pods: fakePods{terminated: map[types.UID]bool{"done": true}}}
	if err := g.GarbageCollect(w.ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.left(), " "); got != "app-1 sb" {
		t.Errorf("left %q", got)
	}
}

type event struct{ typ, reason, msg string }

func TestImageGC(t *testing.T) {
	const mi = 1 << 20
	tests := []struct {
		name     string
		capacity uint64 // the image fs
		other    uint64 // what else uses it (default 15Mi)
		minAge   time.Duration
		want     []string // images left (tags)
		err      string
		event    string
	}{
		{name: "under the high threshold nothing goes", capacity: 200 * mi, want: []string{"a", "b", "c", "pause"}},
		// 40Mi: 20Mi images + 15Mi = 35Mi used, 87%; 3Mi to free.
		{name: "the never used image goes first", capacity: 40 * mi, want: []string{"a", "c", "pause"}},
		// 36Mi: 35Mi used, 97%; 7.2Mi-1Mi to free: b then a.
		{name: "then the least recently used", capacity: 36 * mi, want: []string{"c", "pause"}},
		// full: 20Mi to free, only b and a (10Mi) can go.
		{name: "in use and sandbox images stay; shortfall is an event", capacity: 100 * mi, other: 90 * mi, want: []string{"c", "pause"},
			err: "Failed to garbage collect required amount of images", event: ReasonFreeDiskSpaceFailed},
		{name: "images younger than MinAge stay", capacity: 40 * mi, minAge: time.Hour, want: []string{"a", "b", "c", "pause"},
			err: "only found 0 bytes eligible", event: ReasonFreeDiskSpaceFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			for _, img := range []string{"pause", "a", "b", "c"} {
				if _, err := w.rt.PullImage(w.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: img}}); err != nil {
					t.Fatal(err)
				}
			}
			var events []event
			g := &ImageGC{Runtime: w.rt, Images: w.rt, Clock: w.clk, SandboxImage: "pause",
				Policy: ImagePolicy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: tt.minAge},
				Event:  func(typ, reason, msg string) { events = append(events, event{typ, reason, msg}) },
				FsStats: func(_ context.Context, fs *runtimeapi.FilesystemUsage) (FsStats, error) {
					other := tt.other
					if other == 0 {
						other = 15 * mi
					}
					used := fs.GetUsedBytes().GetValue() + other
					return FsStats{CapacityBytes: tt.capacity, AvailableBytes: tt.capacity - min(used, tt.capacity)}, nil
				}}
			if tt.minAge == 0 {
				g.Policy.MinAge = 2 * time.Minute
			}
			s := w.sandbox("sb", "p", "")
			w.container("old", s, "p", "old", 0, "a", true) // a was used
			w.container("cur", s, "p", "cur", 0, "c", true) // c is in use
			if _, err := g.Detect(w.ctx); err != nil {
				t.Fatal(err)
			}
			w.rt.RemoveContainer(w.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: w.ids["old"]})
			w.clk.Step(3 * time.Minute)
			err := g.GarbageCollect(w.ctx)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("GarbageCollect: %v, want %q", err, tt.err)
			}
			imgs, _ := w.rt.ListImages(w.ctx, &runtimeapi.ListImagesRequest{})
			var left []string
			for _, i := range imgs.Images {
				left = append(left, i.RepoTags...)
			}
			sort.Strings(left)
			if strings.Join(left, " ") != strings.Join(tt.want, " ") {
				t.Errorf("images left %v, want %v", left, tt.want)
			}
			if tt.event == "" && len(events) > 0 || tt.event != "" && (len(events) != 1 || events[0].reason != tt.event || events[0].typ != "Warning") {
				t.Errorf("events %+v, want %s", events, tt.event)
			}
		})
	}
}

func TestImageGCZeroCapacity(t *testing.T) {
	w := newWorld(t)
	var events []event
	g := &ImageGC{Runtime: w.rt, Images: w.rt, Clock: w.clk, Policy: DefaultImagePolicy(),
		Event:   func(typ, reason, msg string) { events = append(events, event{typ, reason, msg}) },
		FsStats: func(context.Context, *runtimeapi.FilesystemUsage) (FsStats, error) { return FsStats{}, nil }}
	if err := g.GarbageCollect(w.ctx); err == nil || len(events) != 1 || events[0].reason != ReasonInvalidDiskCapacity ||
		events[0].msg != "invalid capacity 0 on image filesystem" {
		t.Errorf("err %v events %+v", err, events)
	}
}

func TestImagePolicyValidate(t *testing.T) {
	for _, p := range []ImagePolicy{{HighThresholdPercent: 101}, {HighThresholdPercent: 50, LowThresholdPercent: 60}, {LowThresholdPercent: -1}} {
		if p.Validate() == nil {
			t.Errorf("%+v: no error", p)
		}
	}
	if err := DefaultImagePolicy().Validate(); err != nil {
		t.Error(err)
	}
}
