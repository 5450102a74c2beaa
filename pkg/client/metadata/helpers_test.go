package metadata

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/client/cache"
)

func cacheHandler(added chan<- string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		added <- obj.(*metav1.PartialObjectMetadata).Name
	}}
}
