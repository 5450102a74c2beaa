package v1

import (
	"bytes"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// The bytes of upstream's wire format for a small message (fields 1, 2, 3
// of ServiceReference: namespace "a", name "b", port 443).
func TestServiceReferenceWireFormat(t *testing.T) {
	got, err := (&ServiceReference{Namespace: "a", Name: "b", Port: new(int32(443))}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0x0a, 0x01, 'a', 0x12, 0x01, 'b', 0x18, 0xbb, 0x03}; !bytes.Equal(got, want) {
		t.Errorf("got % x, want % x", got, want)
	}
}

// Objects survive the API server's protobuf serializer (the envelope,
// ObjectMeta and Time from apimachinery).
func TestProtobufRoundTrip(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	ser := protobuf.NewSerializer(s, s)
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	in := &APIServiceList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []APIService{
		{ObjectMeta: metav1.ObjectMeta{Name: "v1.apps", Labels: map[string]string{"a": "b"}, CreationTimestamp: now},
			Spec:   APIServiceSpec{Group: "apps", Version: "v1", GroupPriorityMinimum: 17800, VersionPriority: 15},
			Status: APIServiceStatus{Conditions: []APIServiceCondition{{Type: Available, Status: ConditionTrue, Reason: "Local", Message: "m", LastTransitionTime: now}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.metrics.k8s.io"},
			Spec: APIServiceSpec{Group: "metrics.k8s.io", Version: "v1beta1", GroupPriorityMinimum: -1, VersionPriority: 100, CABundle: []byte("pem"),
				InsecureSkipTLSVerify: true, Service: &ServiceReference{Namespace: "kube-system", Name: "metrics-server", Port: new(int32(443))}}},
	}}
	in.GetObjectKind().SetGroupVersionKind(SchemeGroupVersion.WithKind("APIServiceList"))
	var buf bytes.Buffer
	if err := ser.Encode(in, &buf); err != nil {
		t.Fatal(err)
	}
	out, _, err := ser.Decode(buf.Bytes(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*APIServiceList)
	got.TypeMeta = in.TypeMeta
	if !equality.Semantic.DeepEqual(got, in) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, in)
	}
	one := &in.Items[1]
	one.GetObjectKind().SetGroupVersionKind(SchemeGroupVersion.WithKind("APIService"))
	buf.Reset()
	if err := ser.Encode(one, &buf); err != nil {
		t.Fatal(err)
	}
	var back APIService
	if _, _, err := ser.Decode(buf.Bytes(), nil, &back); err != nil {
		t.Fatal(err)
	}
	back.TypeMeta = one.TypeMeta
	if !equality.Semantic.DeepEqual(&back, one) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, *one)
	}
}
