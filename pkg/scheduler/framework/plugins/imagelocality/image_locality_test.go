package imagelocality

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
	"github.com/skiff-sh/skiff/pkg/scheduler/internal/cache"
)

// fakeHandle serves the snapshot; nothing else of the Handle is used.
type fakeHandle struct {
	framework.Handle
	snapshot framework.SharedLister
}

func (h fakeHandle) SnapshotSharedLister() framework.SharedLister { return h.snapshot }

func containers(images ...string) []corev1.Container {
	out := make([]corev1.Container, len(images))
	for i, img := range images {
		out[i] = corev1.Container{Image: img}
	}
	return out
}

func image(size int64, names ...string) corev1.ContainerImage {
	return corev1.ContainerImage{Names: names, SizeBytes: size * mb}
}

func makeImageNode(name string, images ...corev1.ContainerImage) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Images: images}}
}

func TestImageLocalityPriority(t *testing.T) {
	test40250 := corev1.PodSpec{Containers: containers("gcr.io/40", "gcr.io/250")}
	test40300 := corev1.PodSpec{Containers: containers("gcr.io/40", "gcr.io/300")}
	testMinMax := corev1.PodSpec{Containers: containers("gcr.io/10", "gcr.io/4000")}
	test300600900 := corev1.PodSpec{Containers: containers("gcr.io/300", "gcr.io/600", "gcr.io/900")}
	test3040 := corev1.PodSpec{Containers: containers("gcr.io/30", "gcr.io/40")}
	test30Init300 := corev1.PodSpec{Containers: containers("gcr.io/30"), InitContainers: containers("gcr.io/300")}

	node403002000 := []corev1.ContainerImage{image(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), image(300, "gcr.io/300:latest", "gcr.io/300:v1"), image(2000, "gcr.io/2000:latest")}
	node25010 := []corev1.ContainerImage{image(250, "gcr.io/250:latest"), image(10, "gcr.io/10:latest", "gcr.io/10:v1")}
	node60040900 := []corev1.ContainerImage{image(600, "gcr.io/600:latest"), image(40, "gcr.io/40:latest"), image(900, "gcr.io/900:latest")}
	node300600900 := []corev1.ContainerImage{image(300, "gcr.io/300:latest"), image(600, "gcr.io/600:latest"), image(900, "gcr.io/900:latest")}
	node400030 := []corev1.ContainerImage{image(4000, "gcr.io/4000:latest"), image(30, "gcr.io/30:latest")}
	node203040 := []corev1.ContainerImage{image(20, "gcr.io/20:latest"), image(30, "gcr.io/30:latest"), image(40, "gcr.io/40:latest")}

	for _, tt := range []struct {
		name  string
		pod   corev1.PodSpec
		nodes []*corev1.Node
		want  []int64
	}{
		// node1: 40M/2 < 23M → 0; node2: 100*(250M/2-23M)/(2000M-23M) = 5.
		{"two images spread on two nodes, prefer the larger image one", test40250,
			[]*corev1.Node{makeImageNode("node1", node403002000...), makeImageNode("node2", node25010...)}, []int64{0, 5}},
		// node1: 100*((40M+300M)/2-23M)/(2000M-23M) = 7.
		{"two images on one node, prefer this node", test40300,
			[]*corev1.Node{makeImageNode("node1", node403002000...), makeImageNode("node2", node25010...)}, []int64{7, 0}},
		// node1: 4000M/2 >= 2000M → 100.
		{"if exceed limit, use limit", testMinMax,
			[]*corev1.Node{makeImageNode("node1", node400030...), makeImageNode("node2", node25010...)}, []int64{framework.MaxNodeScore, 0}},
		// node1: 100*(4000M/3-23M)/(2000M-23M) = 66.
		{"if exceed limit, use limit (with node which has no images present)", testMinMax,
			[]*corev1.Node{makeImageNode("node1", node400030...), makeImageNode("node2", node25010...), makeImageNode("node3")}, []int64{66, 0, 0}},
		// node1: 100*(600M*2/3+900M*2/3-23M)/(3000M-23M) = 32; node2 adds 300M/3: 36.
		{"pod with multiple large images, node2 is preferred", test300600900,
			[]*corev1.Node{makeImageNode("node1", node60040900...), makeImageNode("node2", node300600900...), makeImageNode("node3")}, []int64{32, 36, 0}},
		// node1: 100*(30M+40M/2-23M)/(2000M-23M) = 1.
		{"pod with multiple small images", test3040,
			[]*corev1.Node{makeImageNode("node1", node203040...), makeImageNode("node2", node400030...)}, []int64{1, 0}},
		// node1: 100*(300M/2-23M)/(2000M-23M) = 6.
		{"include InitContainers: two images spread on two nodes, prefer the larger image one", test30Init300,
			[]*corev1.Node{makeImageNode("node1", node403002000...), makeImageNode("node2", node203040...)}, []int64{6, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			snapshot := cache.NewSnapshot(nil, tt.nodes)
			pl, err := New(ctx, nil, fakeHandle{snapshot: snapshot})
			if err != nil {
				t.Fatal(err)
			}
			sp := pl.(framework.ScorePlugin)
			if sp.Name() != "ImageLocality" || sp.ScoreExtensions() != nil {
				t.Fatalf("Name() = %q, ScoreExtensions() = %v", sp.Name(), sp.ScoreExtensions())
			}
			pod := &corev1.Pod{Spec: tt.pod}
			for i, n := range tt.nodes {
				ni, err := snapshot.NodeInfos().Get(n.Name)
				if err != nil {
					t.Fatal(err)
				}
				got, st := sp.Score(ctx, framework.NewCycleState(), pod, ni)
				if !st.IsSuccess() {
					t.Fatalf("Score(%s) = %v", n.Name, st)
				}
				if got != tt.want[i] {
					t.Errorf("Score(%s) = %d, want %d", n.Name, got, tt.want[i])
				}
			}
		})
	}
}

func TestNormalizedImageName(t *testing.T) {
	digest := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return "sha256:" + hex.EncodeToString(h[:])
	}
	for _, tt := range []struct{ name, in, want string }{
		{"add :latest postfix 1", "root", "root:latest"},
		{"add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"},
		{"keep it as is 1", "root:tag", "root:tag"},
		{"keep it as is 2", "root@" + digest("root"), "root@" + digest("root")},
		{"no docker.io rewriting (upstream 1.34)", "nginx", "nginx:latest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalizedImageName(tt.in); got != tt.want {
				t.Errorf("normalizedImageName(%q) = %q, want %q", tt.in, got, tt.want)
			}
			want := &framework.ImageStateSummary{Size: 1}
			if got := lookupImage(map[string]*framework.ImageStateSummary{tt.want: want}, tt.in, nil); got != want {
				t.Errorf("lookupImage(%q) did not find it under %q", tt.in, tt.want)
			}
		})
	}
}

// TestScoreDoesNotAllocate: Score makes no allocation per node (the
// ":latest" name is built on the stack for the lookup).
func TestScoreDoesNotAllocate(t *testing.T) {
	nodes := []*corev1.Node{makeImageNode("node1", image(300, "gcr.io/300:latest"), image(40, "registry.example.com/some/long/path/image-name:v1.2.3"))}
	snapshot := cache.NewSnapshot(nil, nodes)
	pl, _ := New(context.Background(), nil, fakeHandle{snapshot: snapshot})
	ni, _ := snapshot.NodeInfos().Get("node1")
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: containers("gcr.io/300", "registry.example.com/some/long/path/image-name:v1.2.3", "nginx")}}
	state := framework.NewCycleState()
	if n := testing.AllocsPerRun(100, func() {
		pl.(framework.ScorePlugin).Score(context.Background(), state, pod, ni)
	}); n != 0 {
		t.Errorf("Score allocates %v times per node", n)
	}
}
