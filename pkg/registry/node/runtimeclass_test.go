package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

func TestValidateRuntimeClass(t *testing.T) {
	valid := func() *nodev1.RuntimeClass {
		return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor", ResourceVersion: "1"}, Handler: "runsc",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
			Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"runtime": "gvisor"},
				Tolerations: []corev1.Toleration{{Key: "runtime", Operator: corev1.TolerationOpEqual, Value: "gvisor", Effect: corev1.TaintEffectNoSchedule}}}}
	}
	tests := []struct {
		name   string
		mutate func(*nodev1.RuntimeClass)
		want   []string
	}{
		{"valid", func(*nodev1.RuntimeClass) {}, nil},
		{"minimal", func(rc *nodev1.RuntimeClass) { rc.Overhead, rc.Scheduling = nil, nil }, nil},
		{"bad name", func(rc *nodev1.RuntimeClass) { rc.Name = "G_Visor" }, []string{"metadata.name: Invalid value"}},
		{"no handler", func(rc *nodev1.RuntimeClass) { rc.Handler = "" }, []string{"handler: Invalid value"}},
		{"handler not a label", func(rc *nodev1.RuntimeClass) { rc.Handler = "run.sc" }, []string{"handler: Invalid value"}},
		{"negative overhead", func(rc *nodev1.RuntimeClass) {
			rc.Overhead.PodFixed[corev1.ResourceMemory] = resource.MustParse("-1")
		}, []string{"overhead.limits[memory]: Invalid value"}},
		{"bad node selector", func(rc *nodev1.RuntimeClass) { rc.Scheduling.NodeSelector = map[string]string{"a b": "x"} },
			[]string{"scheduling.nodeSelector: Invalid value"}},
		{"bad toleration", func(rc *nodev1.RuntimeClass) { rc.Scheduling.Tolerations[0].Effect = "Sometimes" },
			[]string{"scheduling.tolerations[0].effect: Unsupported value"}},
		{"duplicate toleration", func(rc *nodev1.RuntimeClass) {
			rc.Scheduling.Tolerations = append(rc.Scheduling.Tolerations, rc.Scheduling.Tolerations[0])
		}, []string{"scheduling.tolerations[1]: Duplicate value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := valid()
			tc.mutate(rc)
			registrytest.ExpectErrors(t, ValidateRuntimeClass(rc), tc.want...)
		})
	}
	t.Run("update", func(t *testing.T) {
		old := valid()
		rc := old.DeepCopy()
		rc.Scheduling.NodeSelector["extra"] = "y"
		registrytest.ExpectErrors(t, ValidateRuntimeClassUpdate(rc, old))
		rc.Handler = "kata"
		registrytest.ExpectErrors(t, ValidateRuntimeClassUpdate(rc, old), "handler: Invalid value")
	})
}
