package client

import (
	"fmt"
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
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

	apiregistrationv1 "github.com/skiff-sh/skiff/pkg/apis/apiregistration/v1"
)

// builtin maps the Go type of a built-in object to its resource, so that
// For[*corev1.Pod, *corev1.PodList](c) needs no resource name.
var builtin = map[reflect.Type]Resource{}

func register(obj any, group, version, resource string, namespaced bool) {
	builtin[reflect.TypeOf(obj)] = Resource{Group: group, Version: version, Resource: resource, Namespaced: namespaced}
}

func init() {
	for _, r := range []struct {
		obj        any
		group      string
		resource   string
		namespaced bool
	}{
		{&corev1.Pod{}, "", "pods", true},
		{&corev1.Service{}, "", "services", true},
		{&corev1.Endpoints{}, "", "endpoints", true},
		{&corev1.Node{}, "", "nodes", false},
		{&corev1.Namespace{}, "", "namespaces", false},
		{&corev1.ConfigMap{}, "", "configmaps", true},
		{&corev1.Secret{}, "", "secrets", true},
		{&corev1.ServiceAccount{}, "", "serviceaccounts", true},
		{&corev1.Event{}, "", "events", true},
		{&corev1.PersistentVolume{}, "", "persistentvolumes", false},
		{&corev1.PersistentVolumeClaim{}, "", "persistentvolumeclaims", true},
		{&corev1.LimitRange{}, "", "limitranges", true},
		{&corev1.ResourceQuota{}, "", "resourcequotas", true},
		{&corev1.PodTemplate{}, "", "podtemplates", true},
		{&corev1.ReplicationController{}, "", "replicationcontrollers", true},
		{&appsv1.Deployment{}, "apps", "deployments", true},
		{&appsv1.ReplicaSet{}, "apps", "replicasets", true},
		{&appsv1.StatefulSet{}, "apps", "statefulsets", true},
		{&appsv1.DaemonSet{}, "apps", "daemonsets", true},
		{&appsv1.ControllerRevision{}, "apps", "controllerrevisions", true},
		{&batchv1.Job{}, "batch", "jobs", true},
		{&batchv1.CronJob{}, "batch", "cronjobs", true},
		{&autoscalingv2.HorizontalPodAutoscaler{}, "autoscaling", "horizontalpodautoscalers", true},
		{&coordinationv1.Lease{}, "coordination.k8s.io", "leases", true},
		{&eventsv1.Event{}, "events.k8s.io", "events", true},
		{&discoveryv1.EndpointSlice{}, "discovery.k8s.io", "endpointslices", true},
		{&policyv1.PodDisruptionBudget{}, "policy", "poddisruptionbudgets", true},
		{&rbacv1.Role{}, "rbac.authorization.k8s.io", "roles", true},
		{&rbacv1.ClusterRole{}, "rbac.authorization.k8s.io", "clusterroles", false},
		{&rbacv1.RoleBinding{}, "rbac.authorization.k8s.io", "rolebindings", true},
		{&rbacv1.ClusterRoleBinding{}, "rbac.authorization.k8s.io", "clusterrolebindings", false},
		{&schedulingv1.PriorityClass{}, "scheduling.k8s.io", "priorityclasses", false},
		{&storagev1.StorageClass{}, "storage.k8s.io", "storageclasses", false},
		{&nodev1.RuntimeClass{}, "node.k8s.io", "runtimeclasses", false},
		{&storagev1.CSIDriver{}, "storage.k8s.io", "csidrivers", false},
		{&storagev1.CSINode{}, "storage.k8s.io", "csinodes", false},
		{&storagev1.CSIStorageCapacity{}, "storage.k8s.io", "csistoragecapacities", true},
		{&storagev1.VolumeAttachment{}, "storage.k8s.io", "volumeattachments", false},
		{&storagev1.VolumeAttributesClass{}, "storage.k8s.io", "volumeattributesclasses", false},
		{&apiextensionsv1.CustomResourceDefinition{}, "apiextensions.k8s.io", "customresourcedefinitions", false},
		{&networkingv1.IPAddress{}, "networking.k8s.io", "ipaddresses", false},
		{&networkingv1.ServiceCIDR{}, "networking.k8s.io", "servicecidrs", false},
		{&networkingv1.Ingress{}, "networking.k8s.io", "ingresses", true},
		{&networkingv1.IngressClass{}, "networking.k8s.io", "ingressclasses", false},
		{&networkingv1.NetworkPolicy{}, "networking.k8s.io", "networkpolicies", true},
		{&flowcontrolv1.FlowSchema{}, "flowcontrol.apiserver.k8s.io", "flowschemas", false},
		{&flowcontrolv1.PriorityLevelConfiguration{}, "flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", false},
		{&resourcev1.DeviceClass{}, "resource.k8s.io", "deviceclasses", false},
		{&resourcev1.ResourceClaim{}, "resource.k8s.io", "resourceclaims", true},
		{&resourcev1.ResourceClaimTemplate{}, "resource.k8s.io", "resourceclaimtemplates", true},
		{&resourcev1.ResourceSlice{}, "resource.k8s.io", "resourceslices", false},
		{&resourcev1.DeviceTaintRule{}, "resource.k8s.io", "devicetaintrules", false},
		{&storagemigrationv1.StorageVersionMigration{}, "storagemigration.k8s.io", "storageversionmigrations", false},
		{&certificatesv1.CertificateSigningRequest{}, "certificates.k8s.io", "certificatesigningrequests", false},
		{&certificatesv1.ClusterTrustBundle{}, "certificates.k8s.io", "clustertrustbundles", false},
		{&certificatesv1.PodCertificateRequest{}, "certificates.k8s.io", "podcertificaterequests", true},
		{&apiregistrationv1.APIService{}, "apiregistration.k8s.io", "apiservices", false},
		{&admissionregistrationv1.MutatingWebhookConfiguration{}, "admissionregistration.k8s.io", "mutatingwebhookconfigurations", false},
		{&admissionregistrationv1.ValidatingWebhookConfiguration{}, "admissionregistration.k8s.io", "validatingwebhookconfigurations", false},
		{&admissionregistrationv1.ValidatingAdmissionPolicy{}, "admissionregistration.k8s.io", "validatingadmissionpolicies", false},
		{&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, "admissionregistration.k8s.io", "validatingadmissionpolicybindings", false},
		{&admissionregistrationv1.MutatingAdmissionPolicy{}, "admissionregistration.k8s.io", "mutatingadmissionpolicies", false},
		{&admissionregistrationv1.MutatingAdmissionPolicyBinding{}, "admissionregistration.k8s.io", "mutatingadmissionpolicybindings", false},
	} {
		version := "v1"
		if r.group == "autoscaling" {
			version = "v2"
		}
		register(r.obj, r.group, version, r.resource, r.namespaced)
	}
}

// BuiltinResources lists every built-in resource For knows, with an empty
// object of its type, in no particular order.
func BuiltinResources() map[Resource]Object {
	out := make(map[Resource]Object, len(builtin))
	for t, r := range builtin {
		out[r] = reflect.New(t.Elem()).Interface().(Object)
	}
	return out
}

// ResourceFor returns the resource of a built-in object type.
func ResourceFor(obj Object) (Resource, error) {
	r, ok := builtin[reflect.TypeOf(obj)]
	if !ok {
		return Resource{}, fmt.Errorf("client: no built-in resource for %T; use NewTyped with a Resource", obj)
	}
	return r, nil
}

// For returns a typed client for a built-in type, e.g.
// client.For[*corev1.Pod, *corev1.PodList](c). It panics for types that are
// not built in (a programming error); use NewTyped for those.
func For[T Object, L ObjectList](c *Client) *Typed[T, L] {
	r, err := ResourceFor(newOf[T]())
	if err != nil {
		panic(err)
	}
	return NewTyped[T, L](c, r)
}
