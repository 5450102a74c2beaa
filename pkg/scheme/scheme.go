package scheme

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
)

// NewScheme returns a scheme with every API type skiff serves (the versioned
// k8s.io/api types; skiff has no internal versions) and the meta.k8s.io
// types (Status, Table, PartialObjectMetadata, options).
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		autoscalingv1.AddToScheme, autoscalingv2.AddToScheme,
		coordinationv1.AddToScheme, eventsv1.AddToScheme, discoveryv1.AddToScheme,
		policyv1.AddToScheme, rbacv1.AddToScheme, schedulingv1.AddToScheme,
		storagev1.AddToScheme, apiextensionsv1.AddToScheme, admissionregistrationv1.AddToScheme,
		authenticationv1.AddToScheme, authorizationv1.AddToScheme, networkingv1.AddToScheme,
		flowcontrolv1.AddToScheme, certificatesv1.AddToScheme,
		nodev1.AddToScheme,
		resourcev1.AddToScheme, storagemigrationv1.AddToScheme,
		apiregistrationv1.AddToScheme,
		metav1.AddMetaToScheme,
	} {
		utilruntime.Must(add(s))
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}
