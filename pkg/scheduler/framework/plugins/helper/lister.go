package helper

import (
	"fmt"
	"github.com/skiff-sh/skiff/pkg/client/informers"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/skiff-sh/skiff/pkg/client/cache"
	"github.com/skiff-sh/skiff/pkg/scheduler/framework"
)

// Resources named in the NotFound errors of GetObject, as upstream's
// client-go listers name them (singular: `persistentvolumeclaim "data"
// not found`), so that the reasons plugins derive from them read as
// upstream's.
var (
	PersistentVolumeClaimResource = schema.GroupResource{Resource: "persistentvolumeclaim"}
	PersistentVolumeResource      = schema.GroupResource{Resource: "persistentvolume"}
	StorageClassResource          = schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclass"}
	CSINodeResource               = schema.GroupResource{Group: "storage.k8s.io", Resource: "csinode"}
	CSIDriverResource             = schema.GroupResource{Group: "storage.k8s.io", Resource: "csidriver"}
	ResourceClaimResource         = schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaim"}
)

// GetObject reads one object from a lister: namespaced when namespace is
// not empty. A missing object is a NotFound error naming resource.
func GetObject[T runtime.Object](l cache.Lister[T], resource schema.GroupResource, namespace, name string) (T, error) {
	var obj T
	var err error
	if namespace != "" {
		obj, err = l.Namespace(namespace).Get(name)
	} else {
		obj, err = l.Get(name)
	}
	if apierrors.IsNotFound(err) {
		var zero T
		return zero, apierrors.NewNotFound(resource, name)
	}
	return obj, err
}

// ErrorAsStatus turns a lister error into a status as upstream's volume
// plugins do: NotFound is UnschedulableAndUnresolvable with the error's
// message, any other error an Error status; nil stays nil.
func ErrorAsStatus(err error) *framework.Status {
	if err == nil {
		return nil
	}
	if apierrors.IsNotFound(err) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	return framework.AsStatus(err)
}

// ClaimClass is the claim's StorageClass name: the beta annotation
// volume.beta.kubernetes.io/storage-class when present, else
// spec.storageClassName, as upstream's storage helpers.
func ClaimClass(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// VolumeClass is the volume's StorageClass name (beta annotation first).
func VolumeClass(pv *corev1.PersistentVolume) string {
	if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	return pv.Spec.StorageClassName
}

// InformerFactory is the handle's shared informer factory, or an error
// naming the plugin when the framework was built without one (the plugins
// reading cluster objects cannot work without it).
func InformerFactory(h framework.Handle, plugin string) (*informers.SharedInformerFactory, error) {
	if h == nil || h.SharedInformerFactory() == nil {
		return nil, fmt.Errorf("plugin %s needs the framework's shared informer factory", plugin)
	}
	return h.SharedInformerFactory(), nil
}
