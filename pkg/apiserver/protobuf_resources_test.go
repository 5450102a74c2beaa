package apiserver_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/skiff-sh/skiff/pkg/apiserver"
	"github.com/skiff-sh/skiff/pkg/testenv"
)

// The informers upstream's kube-scheduler starts list these resources in
// protobuf (its default content type): each list answers in the k8s\x00
// envelope and decodes into the k8s.io/api list type.
func TestProtobufListsSchedulerInformers(t *testing.T) {
	env := testenv.StartT(t)
	c := env.HTTPClient()
	scheme := apiserver.NewScheme()
	pb := protobuf.NewSerializer(scheme, scheme)
	for _, tc := range []struct {
		path string
		into runtime.Object
	}{
		{"/api/v1/replicationcontrollers", &corev1.ReplicationControllerList{}},
		{"/apis/storage.k8s.io/v1/csidrivers", &storagev1.CSIDriverList{}},
		{"/apis/storage.k8s.io/v1/csinodes", &storagev1.CSINodeList{}},
		{"/apis/storage.k8s.io/v1/csistoragecapacities", &storagev1.CSIStorageCapacityList{}},
		{"/apis/storage.k8s.io/v1/volumeattachments", &storagev1.VolumeAttachmentList{}},
		{"/apis/storage.k8s.io/v1/volumeattributesclasses", &storagev1.VolumeAttributesClassList{}},
		{"/apis/node.k8s.io/v1/runtimeclasses", &nodev1.RuntimeClassList{}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			req, _ := http.NewRequest("GET", env.URL+tc.path, nil)
			req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, */*")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(body, []byte("k8s\x00")) {
				t.Fatalf("list: %d %q", resp.StatusCode, body[:min(len(body), 40)])
			}
			if _, _, err := pb.Decode(body, nil, tc.into); err != nil {
				t.Fatalf("decoding: %v", err)
			}
		})
	}
}
