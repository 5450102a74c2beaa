package apps

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// A DaemonSet's template generation lives, in apps/v1, in the annotation
// deprecated.daemonset.template.generation (upstream's internal
// spec.templateGeneration, converted to and from it): 1 on create (or the
// creator's value if higher), unchanged by updates except one more when
// the template changes. The DaemonSet controller labels its pods with it
// (pod-template-generation).

func templateGeneration(ds *appsv1.DaemonSet) int64 {
	n, err := strconv.ParseInt(ds.Annotations[appsv1.DeprecatedTemplateGeneration], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func setTemplateGeneration(ds *appsv1.DaemonSet, n int64) {
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(n, 10)
}

// PrepareDaemonSetForCreate sets the template generation to at least 1.
func PrepareDaemonSetForCreate(ds *appsv1.DaemonSet) {
	setTemplateGeneration(ds, max(templateGeneration(ds), 1))
}

// PrepareDaemonSetForUpdate keeps the stored template generation, one more
// when the template changed.
func PrepareDaemonSetForUpdate(ds, old *appsv1.DaemonSet) {
	gen := templateGeneration(old)
	if !apiequality.Semantic.DeepEqual(ds.Spec.Template, old.Spec.Template) {
		gen++
	}
	setTemplateGeneration(ds, gen)
}
