package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

func debugContainer(name, target string) corev1.EphemeralContainer {
	ec := corev1.EphemeralContainer{TargetContainerName: target, EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: name, Image: "busybox:1.35.0", Command: []string{"sh"}, Stdin: true, TTY: true,
		TerminationMessagePath: corev1.TerminationMessagePathDefault, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy: corev1.PullIfNotPresent}}
	return ec
}

func TestValidatePodEphemeralContainersUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(p *corev1.Pod)
		mutate func(p *corev1.Pod)
		want   []string
		msg    string // the first error's start
	}{
		{name: "add one", mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugContainer("debugger", "nginx"))
		}},
		{name: "add a second, reordered", old: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("one", "")}
		}, mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("two", ""), p.Spec.EphemeralContainers[0]}
		}},
		{name: "remove", old: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("one", "")}
		}, mutate: func(p *corev1.Pod) { p.Spec.EphemeralContainers = nil },
			want: []string{"spec.ephemeralContainers: Forbidden"},
			msg:  "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"one\" may not be removed\n"},
		{name: "change", old: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("one", "")}
		}, mutate: func(p *corev1.Pod) { p.Spec.EphemeralContainers[0].Image = "busybox:1.36" },
			want: []string{"spec.ephemeralContainers: Forbidden"},
			msg:  "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"one\" may not be changed\n"},
		{name: "name of a regular container", mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("nginx", "")}
		}, want: []string{"spec.ephemeralContainers[0].name: Duplicate value"}},
		{name: "duplicate names", mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("a", ""), debugContainer("a", "")}
		}, want: []string{"spec.ephemeralContainers[1].name: Duplicate value"}},
		{name: "unknown target", mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("a", "nope")}
		}, want: []string{"spec.ephemeralContainers[0].targetContainerName: Not found"}},
		{name: "target another ephemeral container", old: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("one", "")}
		}, mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugContainer("two", "one"))
		}, want: []string{"spec.ephemeralContainers[1].targetContainerName: Not found"}},
		{name: "ports, probes, lifecycle, resources", mutate: func(p *corev1.Pod) {
			ec := debugContainer("a", "")
			ec.Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
			ec.ReadinessProbe = p.Spec.Containers[0].ReadinessProbe
			ec.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			ec.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{ec}
		}, want: []string{"spec.ephemeralContainers[0].ports: Forbidden",
			"spec.ephemeralContainers[0].resources: Forbidden", "spec.ephemeralContainers[0].lifecycle: Forbidden",
			"spec.ephemeralContainers[0].readinessProbe: Forbidden"}},
		{name: "subPath", mutate: func(p *corev1.Pod) {
			ec := debugContainer("a", "")
			ec.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/d", SubPath: "x"}}
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{ec}
		}, want: []string{"spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden"}},
		{name: "static pod", old: func(p *corev1.Pod) {
			p.Spec.NodeName = "n1"
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}, mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("a", "")}
		}, want: []string{"[]: Forbidden"}, msg: "[]: Forbidden: static pods do not support ephemeral containers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validPod()
			old.ResourceVersion = "1"
			if tc.old != nil {
				tc.old(old)
			}
			pod := old.DeepCopy()
			tc.mutate(pod)
			errs := ValidatePodEphemeralContainersUpdate(pod, old)
			registrytest.ExpectErrors(t, errs, tc.want...)
			if tc.msg != "" && (len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), tc.msg)) {
				t.Errorf("message: %v, want %q first", errs, tc.msg)
			}
		})
	}
}

// Through the subresource only ephemeral containers change.
func TestPrepareEphemeralContainersUpdate(t *testing.T) {
	old := validPod()
	old.ResourceVersion, old.Generation = "1", 3
	old.Status.Phase = corev1.PodRunning
	pod := old.DeepCopy()
	pod.Labels = map[string]string{"other": "x"}
	pod.Spec.Containers[0].Image = "nginx:2"
	pod.Status.Phase = corev1.PodFailed
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugContainer("debugger", "nginx")}
	PrepareEphemeralContainersUpdate(pod, old)
	if pod.Labels["app"] != "web" || pod.Labels["other"] != "" || pod.Spec.Containers[0].Image != "nginx:1.27" || pod.Status.Phase != corev1.PodRunning {
		t.Errorf("more than the ephemeral containers changed: labels %v, image %s, phase %s", pod.Labels, pod.Spec.Containers[0].Image, pod.Status.Phase)
	}
	if len(pod.Spec.EphemeralContainers) != 1 || pod.Generation != 4 {
		t.Errorf("ephemeral containers %v, generation %d (want 1 container, generation 4)", pod.Spec.EphemeralContainers, pod.Generation)
	}
	same := old.DeepCopy()
	PrepareEphemeralContainersUpdate(same, old)
	if same.Generation != 3 {
		t.Errorf("no change: generation %d, want 3", same.Generation)
	}
	if errs := ValidatePodEphemeralContainersUpdate(pod, old); len(errs) != 0 {
		t.Errorf("valid update refused: %v", errs)
	}
}
