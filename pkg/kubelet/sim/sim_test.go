package sim

import (
	"context"
	"reflect"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skiff-sh/skiff/pkg/clock"
	"github.com/skiff-sh/skiff/pkg/kubelet/cri"
)

func run(t *testing.T, r *Runtime, annotations map[string]string) string {
	t.Helper()
	resp, err := r.RunPodSandbox(context.Background(), &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "u1"}, Annotations: annotations}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.PodSandboxId
}

func start(t *testing.T, r *Runtime, sb, name, typ string) string {
	t.Helper()
	ctx := context.Background()
	c, err := r.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name}, Image: &runtimeapi.ImageSpec{Image: "busybox"},
		Annotations: map[string]string{cri.AnnotationContainerType: typ}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Fatal(err)
	}
	return c.ContainerId
}

func status(t *testing.T, r *Runtime, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	s, err := r.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		t.Fatal(err)
	}
	return s.Status
}

func TestLifecycle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		annotations map[string]string
		typ         string
		stop        bool
		steps       []time.Duration // clock steps, then the state expected after each
		want        []runtimeapi.ContainerState
		exit        int32
	}{
		{name: "runs forever", typ: "regular", steps: []time.Duration{0, time.Second, time.Hour},
			want: []runtimeapi.ContainerState{runtimeapi.ContainerState_CONTAINER_CREATED, runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_RUNNING}},
		{name: "job completes after run duration", typ: "regular", annotations: map[string]string{cri.AnnotationPodRestartPolicy: "Never"},
			steps: []time.Duration{time.Second, 4 * time.Second, time.Second},
			want:  []runtimeapi.ContainerState{runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_EXITED}},
		{name: "annotation run duration and exit code", typ: "regular", annotations: map[string]string{AnnotationRunDuration: "2s", AnnotationExitCode: "3"},
			steps: []time.Duration{time.Second, 2 * time.Second}, exit: 3,
			want: []runtimeapi.ContainerState{runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_EXITED}},
		{name: "init exits", typ: "init", steps: []time.Duration{time.Second},
			want: []runtimeapi.ContainerState{runtimeapi.ContainerState_CONTAINER_EXITED}},
		{name: "sidecar of a job runs", typ: "sidecar", annotations: map[string]string{cri.AnnotationPodRestartPolicy: "Never"}, steps: []time.Duration{time.Hour},
			want: []runtimeapi.ContainerState{runtimeapi.ContainerState_CONTAINER_RUNNING}},
		{name: "stop within grace", typ: "regular", stop: true, steps: []time.Duration{time.Second, 2 * time.Second}, exit: 143,
			want: []runtimeapi.ContainerState{runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_EXITED}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			r := New(Config{Clock: clk, StartLatency: time.Second, StopLatency: 2 * time.Second, RunDuration: 5 * time.Second})
			id := start(t, r, run(t, r, tt.annotations), "c", tt.typ)
			if tt.stop {
				if _, err := r.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30}); err != nil {
					t.Fatal(err)
				}
			}
			for i, d := range tt.steps {
				clk.Step(d)
				s := status(t, r, id)
				if s.State != tt.want[i] {
					t.Fatalf("after step %d: state %v, want %v", i, s.State, tt.want[i])
				}
				if s.State == runtimeapi.ContainerState_CONTAINER_EXITED && s.ExitCode != tt.exit {
					t.Fatalf("exit code %d, want %d", s.ExitCode, tt.exit)
				}
			}
		})
	}
}

func TestStopBeyondTimeoutIsKill(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r := New(Config{Clock: clk, StopLatency: time.Minute})
	id := start(t, r, run(t, r, nil), "c", "regular")
	if _, err := r.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 2}); err != nil {
		t.Fatal(err)
	}
	clk.Step(2 * time.Second)
	if s := status(t, r, id); s.State != runtimeapi.ContainerState_CONTAINER_EXITED || s.ExitCode != 137 {
		t.Fatalf("got %v exit %d, want EXITED 137", s.State, s.ExitCode)
	}
}

func TestSandboxIPsAndRemoval(t *testing.T) {
	r := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	ctx := context.Background()
	a, b := run(t, r, nil), run(t, r, nil)
	sa, _ := r.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: a})
	sb, _ := r.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: b})
	if sa.Status.Network.Ip != "10.88.0.2" || sb.Status.Network.Ip != "10.88.0.3" {
		t.Fatalf("IPs %s %s", sa.Status.Network.Ip, sb.Status.Network.Ip)
	}
	start(t, r, a, "c", "regular")
	if _, err := r.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: a}); err != nil {
		t.Fatal(err)
	}
	l, _ := r.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if len(l.Containers) != 0 {
		t.Fatalf("containers left: %d", len(l.Containers))
	}
	if _, err := r.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: a}); !cri.IsNotFound(err) {
		t.Fatalf("status of removed sandbox: %v", err)
	}
	if c := run(t, r, nil); c == "" {
		t.Fatal("no id")
	} else if s, _ := r.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: c}); s.Status.Network.Ip != "10.88.0.2" {
		t.Fatalf("freed IP not reused: %s", s.Status.Network.Ip)
	}
}

func TestImages(t *testing.T) {
	r := New(Config{})
	ctx := context.Background()
	p, err := r.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := r.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "nginx"}})
	if s.Image == nil || s.Image.Id != p.ImageRef || s.Image.RepoTags[0] != "nginx" {
		t.Fatalf("image status %v", s.Image)
	}
	r.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx"}})
	if s, _ := r.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "nginx"}}); s.Image != nil {
		t.Fatal("removed image still there")
	}
}

// Equal annotations (the pods of one template, on every node given the
// same table) share one copy, kept while a sandbox or container holds it;
// what the runtime reports is unchanged.
func TestEqualAnnotationsShared(t *testing.T) {
	ctx := context.Background()
	table := NewAnnotationTable()
	refs := func(m map[string]string) int {
		_, s := table.share(m)
		table.release(s)
		return s.refs
	}
	r1 := New(Config{Clock: clock.NewFake(time.Unix(1000, 0)), Annotations: table})
	r2 := New(Config{Clock: clock.NewFake(time.Unix(1000, 0)), Annotations: table})
	a12, a13 := map[string]string{"test-a": "1", "test-b": "2"}, map[string]string{"test-a": "1", "test-b": "3"}
	sb1 := run(t, r1, map[string]string{"test-a": "1", "test-b": "2"})
	sb2 := run(t, r2, map[string]string{"test-b": "2", "test-a": "1"})
	sb3 := run(t, r1, a13)
	if refs(a12) != 2 || refs(a13) != 1 {
		t.Fatalf("holders: %d of %v, %d of %v; want 2 and 1", refs(a12), a12, refs(a13), a13)
	}
	c1, c2 := start(t, r1, sb1, "test-c", "test-type"), start(t, r2, sb2, "test-c", "test-type")
	st1, st2 := status(t, r1, c1), status(t, r2, c2)
	if reflect.ValueOf(st1.Annotations).UnsafePointer() != reflect.ValueOf(st2.Annotations).UnsafePointer() {
		t.Error("the containers' equal annotations are not shared")
	}
	s, err := r1.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb3})
	if err != nil || !reflect.DeepEqual(s.Status.Annotations, a13) {
		t.Fatalf("sandbox 3: %v %v", s, err)
	}
	if _, err := r1.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c1}); err != nil {
		t.Fatal(err)
	}
	ca := map[string]string{cri.AnnotationContainerType: "test-type"}
	if got := status(t, r2, c2).Annotations; refs(ca) != 1 || !reflect.DeepEqual(got, ca) {
		t.Errorf("after removing one container: %d holders, the other's annotations %v", refs(ca), got)
	}
	for _, x := range []struct {
		r  *Runtime
		sb string
	}{{r1, sb1}, {r2, sb2}, {r1, sb3}} {
		if _, err := x.r.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: x.sb}); err != nil {
			t.Fatal(err)
		}
	}
	table.mu.Lock()
	defer table.mu.Unlock()
	for _, m := range []map[string]string{a12, a13, ca} {
		for _, s := range table.m {
			if reflect.DeepEqual(s.m, m) {
				t.Errorf("%v still held %d times after everything was removed", m, s.refs)
			}
		}
	}
}
