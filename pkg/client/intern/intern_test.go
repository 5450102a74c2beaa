package intern_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skiff-sh/skiff/pkg/client/intern"
)

// benchPod is pod i of ReplicaSet rs as the API server stores a pod of
// `skiff bench controllers` (defaults and the service-account volume of
// admission), decoded from protobuf as an informer gets it.
func benchPod(t testing.TB, rs, i int, image string) *corev1.Pod {
	t.Helper()
	b, err := benchPodValue(rs, i, image).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p := &corev1.Pod{}
	if err := p.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	return p
}

func benchPodValue(rs, i int, image string) *corev1.Pod {
	rsName := fmt.Sprintf("bench-%04d-7487b4585c", rs)
	vol := fmt.Sprintf("kube-api-access-%05d", i)
	i64 := func(v int64) *int64 { return &v }
	tolerations := []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(300)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: i64(300)},
	}
	mode := int32(420)
	preempt := corev1.PreemptLowerPriority
	prio := int32(0)
	links := true
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%05d", rsName, i), GenerateName: rsName + "-", Namespace: "b1",
			UID:             types.UID(fmt.Sprintf("d9516ce6-1199-4907-bd2a-%012d", rs*1000000+i)),
			ResourceVersion: fmt.Sprint(1000 + i), Generation: 1,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 26, 0, 2, 45, 0, time.UTC)),
			Labels:            map[string]string{"app": fmt.Sprintf("bench-%04d", rs), "pod-template-hash": "7487b4585c"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rsName,
				UID: types.UID(fmt.Sprintf("1ad0bc75-57fc-44a6-b11b-%012d", rs)), Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "pause", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("4Mi")}},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				VolumeMounts: []corev1.VolumeMount{{Name: vol, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
			}},
			DNSPolicy: corev1.DNSClusterFirst, EnableServiceLinks: &links, PreemptionPolicy: &preempt, Priority: &prio,
			RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
			SecurityContext: &corev1.PodSecurityContext{}, ServiceAccountName: "default", DeprecatedServiceAccount: "default",
			TerminationGracePeriodSeconds: i64(30), Tolerations: tolerations,
			Volumes: []corev1.Volume{{Name: vol, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: &mode,
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: i64(3607), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				},
			}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBurstable},
	}
}

func sameSlice[E any](a, b []E) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func sameMap[K comparable, V any](a, b map[K]V) bool {
	return fmt.Sprintf("%p", a) == fmt.Sprintf("%p", b)
}

func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b))
}

// Pods of one template share their equal parts; pods of another template
// share only what they have in common; unique parts stay unique.
func TestPodsShareEqualParts(t *testing.T) {
	in := intern.New()
	// The first pod of a template keeps its parts (a part becomes
	// canonical at its second sighting).
	scout, otherScout := benchPod(t, 1, 0, "pause:1"), benchPod(t, 2, 0, "pause:2")
	a, b := benchPod(t, 1, 1, "pause:1"), benchPod(t, 1, 2, "pause:1")
	other := benchPod(t, 2, 3, "pause:2")
	for _, p := range []*corev1.Pod{scout, otherScout, a, b, other} {
		in.Pod(p)
	}
	ca, cb, co := &a.Spec.Containers[0], &b.Spec.Containers[0], &other.Spec.Containers[0]
	shared := []struct {
		what string
		same bool
	}{
		{"labels", sameMap(a.Labels, b.Labels)},
		{"owner references", sameSlice(a.OwnerReferences, b.OwnerReferences)},
		{"generateName", sameString(a.GenerateName, b.GenerateName)},
		{"namespace", sameString(a.Namespace, other.Namespace)},
		{"tolerations", sameSlice(a.Spec.Tolerations, other.Spec.Tolerations)},
		{"projected volume source", a.Spec.Volumes[0].Projected == other.Spec.Volumes[0].Projected},
		{"pod security context", a.Spec.SecurityContext == other.Spec.SecurityContext},
		{"terminationGracePeriodSeconds", a.Spec.TerminationGracePeriodSeconds == other.Spec.TerminationGracePeriodSeconds},
		{"priority", a.Spec.Priority == other.Spec.Priority},
		{"preemptionPolicy", a.Spec.PreemptionPolicy == other.Spec.PreemptionPolicy},
		{"schedulerName", sameString(a.Spec.SchedulerName, other.Spec.SchedulerName)},
		{"resource requests", sameMap(ca.Resources.Requests, co.Resources.Requests)},
		{"image", sameString(ca.Image, cb.Image)},
		{"container name", sameString(ca.Name, co.Name)},
		{"mount path", sameString(ca.VolumeMounts[0].MountPath, co.VolumeMounts[0].MountPath)},
		{"mount name and volume name", sameString(ca.VolumeMounts[0].Name, a.Spec.Volumes[0].Name)},
		{"phase", sameString(string(a.Status.Phase), string(other.Status.Phase))},
	}
	for _, s := range shared {
		if !s.same {
			t.Errorf("%s not shared", s.what)
		}
	}
	distinct := []struct {
		what string
		same bool
	}{
		{"labels of another ReplicaSet", sameMap(a.Labels, other.Labels)},
		{"owner references of another ReplicaSet", sameSlice(a.OwnerReferences, other.OwnerReferences)},
		{"another image", sameString(ca.Image, co.Image)},
		{"names", sameString(a.Name, b.Name)},
		{"volume mounts (generated volume names)", sameSlice(ca.VolumeMounts, cb.VolumeMounts)},
		{"containers (mounting generated volumes)", sameSlice(a.Spec.Containers, b.Spec.Containers)},
	}
	for _, s := range distinct {
		if s.same {
			t.Errorf("%s shared", s.what)
		}
	}
	// Shared slices have no spare capacity: an append copies.
	if cap(a.Spec.Tolerations) != len(a.Spec.Tolerations) {
		t.Fatalf("shared tolerations have cap %d, len %d", cap(a.Spec.Tolerations), len(a.Spec.Tolerations))
	}
	grown := append(a.Spec.Tolerations, corev1.Toleration{Key: "x"})
	grown[0].Key = "changed"
	if b.Spec.Tolerations[0].Key != "node.kubernetes.io/not-ready" || len(b.Spec.Tolerations) != 2 {
		t.Errorf("an append to one pod's tolerations changed another's: %+v", b.Spec.Tolerations)
	}
}

// Without a generated volume, whole container lists are shared.
func TestContainerListsShared(t *testing.T) {
	in := intern.New()
	var pods []*corev1.Pod
	for i := range 3 {
		p := benchPod(t, 1, i, "pause:1")
		p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts = nil, nil
		in.Pod(p)
		pods = append(pods, p)
	}
	if !sameSlice(pods[1].Spec.Containers, pods[2].Spec.Containers) {
		t.Error("equal container lists not shared")
	}
	if got := cap(pods[1].Spec.Containers); got != 1 {
		t.Errorf("shared list has cap %d, want its length 1", got)
	}
}

// Interning never changes a value: every pod encodes as before.
func TestValuesUnchanged(t *testing.T) {
	in := intern.New()
	variants := []func(p *corev1.Pod){
		func(*corev1.Pod) {},
		func(p *corev1.Pod) { p.Labels["extra"] = "x" },
		func(p *corev1.Pod) { p.Spec.Tolerations = p.Spec.Tolerations[:1] },
		func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		},
		func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")}
		},
		func(p *corev1.Pod) { p.Spec.Volumes[0].Projected.Sources = p.Spec.Volumes[0].Projected.Sources[1:] },
		func(p *corev1.Pod) { p.Spec.Priority = nil; p.Spec.NodeName = "n1" },
		func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"true"}}}
		},
		func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, Reason: "r", Message: "m"}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "pause", Image: "pause:1", ImageID: "sha256:1"}}
		},
	}
	for round := range 2 {
		for i, v := range variants {
			p := benchPod(t, i%2, i, fmt.Sprint("pause:", i%3))
			v(p)
			want, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			in.Pod(p)
			got, err := p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("round %d variant %d: interning changed the pod", round, i)
			}
		}
	}
	if s := in.Stats(); s.Hits == 0 || s.Misses == 0 {
		t.Errorf("stats %+v: want hits and misses", s)
	}
}

// Entries go once no object uses their canonical instances.
func TestEntriesReclaimed(t *testing.T) {
	in := intern.New()
	pods := make([]*corev1.Pod, 300)
	for i := range pods {
		pods[i] = benchPod(t, i%3, i, fmt.Sprint("pause:", i%3))
		in.Pod(pods[i])
	}
	full := in.Stats().Entries
	if full == 0 {
		t.Fatal("no entries")
	}
	// Half the ReplicaSets' pods go: their own entries (labels, owner
	// references, generateNames, images) go, the common ones stay.
	for i := range pods {
		if i%3 != 0 {
			pods[i] = nil
		}
	}
	waitEntries(t, in, func(n int) bool { return n < full && n > 0 })
	kept := pods[297] // of ReplicaSet 0, not its first pod: sharing
	fresh := benchPod(t, 0, 1000, "pause:0")
	in.Pod(fresh)
	if !sameMap(fresh.Labels, kept.Labels) || !sameSlice(fresh.Spec.Tolerations, kept.Spec.Tolerations) {
		t.Error("a live canonical instance was dropped")
	}
	runtime.KeepAlive(pods)
	runtime.KeepAlive(kept)
	runtime.KeepAlive(fresh)
	waitEntries(t, in, func(n int) bool { return n == 0 })
}

func waitEntries(t *testing.T, in *intern.Interner, ok func(int) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		n := in.Stats().Entries
		if ok(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("entries %d after 10s", n)
		}
		runtime.Gosched()
	}
}
