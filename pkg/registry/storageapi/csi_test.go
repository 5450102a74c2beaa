package storageapi

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
)

func TestDefaultCSIDriver(t *testing.T) {
	d := &storagev1.CSIDriver{}
	DefaultCSIDriver(d)
	s := d.Spec
	if !*s.AttachRequired || *s.PodInfoOnMount || *s.StorageCapacity || *s.RequiresRepublish || *s.SELinuxMount {
		t.Errorf("boolean defaults wrong: %+v", s)
	}
	if *s.FSGroupPolicy != storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy {
		t.Errorf("fsGroupPolicy = %v", *s.FSGroupPolicy)
	}
	if len(s.VolumeLifecycleModes) != 1 || s.VolumeLifecycleModes[0] != storagev1.VolumeLifecyclePersistent {
		t.Errorf("volumeLifecycleModes = %v", s.VolumeLifecycleModes)
	}
	d = &storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{AttachRequired: new(false),
		VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral}}}
	DefaultCSIDriver(d)
	if *d.Spec.AttachRequired || d.Spec.VolumeLifecycleModes[0] != storagev1.VolumeLifecycleEphemeral {
		t.Errorf("user values overwritten: %+v", d.Spec)
	}
}

func TestValidateCSIDriver(t *testing.T) {
	valid := func() *storagev1.CSIDriver {
		d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}}
		DefaultCSIDriver(d)
		return d
	}
	tests := []struct {
		name   string
		mutate func(*storagev1.CSIDriver)
		want   []string
	}{
		{"valid", func(*storagev1.CSIDriver) {}, nil},
		{"bad name", func(d *storagev1.CSIDriver) { d.Name = "Not_Valid" }, []string{"metadata.name: Invalid value"}},
		{"namespaced", func(d *storagev1.CSIDriver) { d.Namespace = "x" }, []string{"metadata.namespace: Forbidden"}},
		{"attachRequired unset", func(d *storagev1.CSIDriver) { d.Spec.AttachRequired = nil }, []string{"spec.attachedRequired: Required value"}},
		{"podInfoOnMount unset", func(d *storagev1.CSIDriver) { d.Spec.PodInfoOnMount = nil }, []string{"spec.podInfoOnMount: Required value"}},
		{"storageCapacity unset", func(d *storagev1.CSIDriver) { d.Spec.StorageCapacity = nil }, []string{"spec.storageCapacity: Required value"}},
		{"seLinuxMount unset", func(d *storagev1.CSIDriver) { d.Spec.SELinuxMount = nil }, []string{"spec.seLinuxMount: Required value"}},
		{"fsGroupPolicy", func(d *storagev1.CSIDriver) { d.Spec.FSGroupPolicy = new(storagev1.FSGroupPolicy("Sometimes")) },
			[]string{"spec.fsGroupPolicy: Unsupported value"}},
		{"lifecycle mode", func(d *storagev1.CSIDriver) {
			d.Spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{"Forever"}
		}, []string{"spec.volumeLifecycleModes: Unsupported value"}},
		{"duplicate audience", func(d *storagev1.CSIDriver) {
			d.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "a"}, {Audience: "a"}}
		}, []string{"spec.tokenRequests[1].audience: Duplicate value"}},
		{"short token", func(d *storagev1.CSIDriver) {
			d.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "a", ExpirationSeconds: new(int64(599))}}
		}, []string{"spec.tokenRequests[0].expirationSeconds: Invalid value"}},
		{"long token", func(d *storagev1.CSIDriver) {
			d.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "a", ExpirationSeconds: new(int64(1<<32 + 1))}}
		}, []string{"spec.tokenRequests[0].expirationSeconds: Invalid value"}},
		{"update period", func(d *storagev1.CSIDriver) { d.Spec.NodeAllocatableUpdatePeriodSeconds = new(int64(9)) },
			[]string{"spec.nodeAllocatableUpdatePeriodSeconds: Invalid value"}},
		{"token in secrets without requests", func(d *storagev1.CSIDriver) { d.Spec.ServiceAccountTokenInSecrets = new(true) },
			[]string{"spec.serviceAccountTokenInSecrets: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := valid()
			tc.mutate(d)
			registrytest.ExpectErrors(t, ValidateCSIDriver(d), tc.want...)
		})
	}
}

func TestValidateCSIDriverUpdate(t *testing.T) {
	old := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "d", ResourceVersion: "1"}}
	DefaultCSIDriver(old)
	tests := []struct {
		name   string
		mutate func(*storagev1.CSIDriver)
		want   []string
	}{
		{"podInfoOnMount may change", func(d *storagev1.CSIDriver) { d.Spec.PodInfoOnMount = new(true) }, nil},
		{"attachRequired", func(d *storagev1.CSIDriver) { d.Spec.AttachRequired = new(false) }, []string{"spec.attachedRequired: Invalid value"}},
		{"lifecycle modes", func(d *storagev1.CSIDriver) {
			d.Spec.VolumeLifecycleModes = append(d.Spec.VolumeLifecycleModes, storagev1.VolumeLifecycleEphemeral)
		}, []string{"spec.volumeLifecycleModes: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := old.DeepCopy()
			tc.mutate(d)
			registrytest.ExpectErrors(t, ValidateCSIDriverUpdate(d, old), tc.want...)
		})
	}
}

func TestValidateCSINode(t *testing.T) {
	valid := func() *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-1", ResourceVersion: "1"},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: "n1",
				TopologyKeys: []string{"topology.kubernetes.io/zone"}, Allocatable: &storagev1.VolumeNodeResources{Count: new(int32(10))}}}}}
	}
	tests := []struct {
		name   string
		mutate func(*storagev1.CSINode)
		want   []string
	}{
		{"valid", func(*storagev1.CSINode) {}, nil},
		{"no drivers", func(n *storagev1.CSINode) { n.Spec.Drivers = nil }, nil},
		{"driver name", func(n *storagev1.CSINode) { n.Spec.Drivers[0].Name = "" }, []string{"spec.drivers[0].name: Required value", "spec.drivers[0].name: Invalid value"}},
		{"no node id", func(n *storagev1.CSINode) { n.Spec.Drivers[0].NodeID = "" }, []string{"spec.drivers[0].nodeID: Required value"}},
		{"long node id", func(n *storagev1.CSINode) { n.Spec.Drivers[0].NodeID = strings.Repeat("x", 257) }, []string{"spec.drivers[0].nodeID: Invalid value"}},
		{"negative count", func(n *storagev1.CSINode) { n.Spec.Drivers[0].Allocatable.Count = new(int32(-1)) }, []string{"spec.drivers[0].allocatable.count: Invalid value"}},
		{"duplicate driver", func(n *storagev1.CSINode) { n.Spec.Drivers = append(n.Spec.Drivers, n.Spec.Drivers[0]) }, []string{"spec.drivers[1].name: Duplicate value"}},
		{"duplicate key", func(n *storagev1.CSINode) { n.Spec.Drivers[0].TopologyKeys = []string{"a", "a"} }, []string{"spec.drivers[0]: Duplicate value"}},
		{"bad key", func(n *storagev1.CSINode) { n.Spec.Drivers[0].TopologyKeys = []string{"a b"} }, []string{"spec.drivers[0]: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := valid()
			tc.mutate(n)
			registrytest.ExpectErrors(t, ValidateCSINode(n), tc.want...)
		})
	}
	t.Run("update", func(t *testing.T) {
		old := valid()
		n := old.DeepCopy()
		n.Spec.Drivers[0].Allocatable.Count = new(int32(5))
		registrytest.ExpectErrors(t, ValidateCSINodeUpdate(n, old))
		n.Spec.Drivers[0].NodeID = "other"
		registrytest.ExpectErrors(t, ValidateCSINodeUpdate(n, old), "spec.drivers: Invalid value")
		n = old.DeepCopy()
		n.Spec.Drivers = nil // a driver may go away
		registrytest.ExpectErrors(t, ValidateCSINodeUpdate(n, old))
	})
}

func TestValidateCSIStorageCapacity(t *testing.T) {
	valid := func() *storagev1.CSIStorageCapacity {
		return &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "cap-1", Namespace: "kube-system", ResourceVersion: "1"},
			NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{"topology.kubernetes.io/zone": "a"}},
			StorageClassName: "fast", Capacity: new(resource.MustParse("10Gi"))}
	}
	tests := []struct {
		name   string
		mutate func(*storagev1.CSIStorageCapacity)
		want   []string
	}{
		{"valid", func(*storagev1.CSIStorageCapacity) {}, nil},
		{"no namespace", func(c *storagev1.CSIStorageCapacity) { c.Namespace = "" }, []string{"metadata.namespace: Required value"}},
		{"no class", func(c *storagev1.CSIStorageCapacity) { c.StorageClassName = "" }, []string{"storageClassName: Invalid value"}},
		{"bad selector", func(c *storagev1.CSIStorageCapacity) { c.NodeTopology.MatchLabels = map[string]string{"a": "b c"} },
			[]string{"nodeTopology.matchLabels: Invalid value"}},
		{"negative", func(c *storagev1.CSIStorageCapacity) { c.Capacity = new(resource.MustParse("-1")) }, []string{"capacity: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.mutate(c)
			registrytest.ExpectErrors(t, ValidateCSIStorageCapacity(c), tc.want...)
		})
	}
	t.Run("update", func(t *testing.T) {
		old := valid()
		c := old.DeepCopy()
		c.Capacity = new(resource.MustParse("5Gi"))
		c.MaximumVolumeSize = new(resource.MustParse("1Gi"))
		registrytest.ExpectErrors(t, ValidateCSIStorageCapacityUpdate(c, old))
		c.StorageClassName = "slow"
		c.NodeTopology = nil
		registrytest.ExpectErrors(t, ValidateCSIStorageCapacityUpdate(c, old), "storageClassName: Invalid value", "nodeTopology: Invalid value")
	})
}

func TestValidateVolumeAttachment(t *testing.T) {
	valid := func() *storagev1.VolumeAttachment {
		return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "csi-123", ResourceVersion: "1"},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1",
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: new("pv-1")}}}
	}
	inline := &corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h"}}}
	tests := []struct {
		name   string
		mutate func(*storagev1.VolumeAttachment)
		want   []string
	}{
		{"valid", func(*storagev1.VolumeAttachment) {}, nil},
		{"inline", func(va *storagev1.VolumeAttachment) {
			va.Spec.Source = storagev1.VolumeAttachmentSource{InlineVolumeSpec: inline.DeepCopy()}
		}, nil},
		{"no attacher", func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = "" }, []string{"spec.attacher: Required value"}},
		{"bad attacher", func(va *storagev1.VolumeAttachment) { va.Spec.Attacher = "a b" }, []string{"spec.attacher: Invalid value"}},
		{"no source", func(va *storagev1.VolumeAttachment) { va.Spec.Source = storagev1.VolumeAttachmentSource{} }, []string{"spec.source: Required value"}},
		{"two sources", func(va *storagev1.VolumeAttachment) { va.Spec.Source.InlineVolumeSpec = inline.DeepCopy() }, []string{"spec.source: Forbidden"}},
		{"empty pv name", func(va *storagev1.VolumeAttachment) { va.Spec.Source.PersistentVolumeName = new("") },
			[]string{"spec.source.persistentVolumeName: Required value"}},
		{"inline without csi", func(va *storagev1.VolumeAttachment) {
			s := inline.DeepCopy()
			s.CSI = nil
			s.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
			va.Spec.Source = storagev1.VolumeAttachmentSource{InlineVolumeSpec: s}
		}, []string{"spec.source.inlineVolumeSpec.csi: Required value", "spec.source.inlineVolumeSpec.capacity: Forbidden"}},
		{"no node", func(va *storagev1.VolumeAttachment) { va.Spec.NodeName = "" }, []string{"spec.nodeName: Invalid value"}},
		{"negative error code", func(va *storagev1.VolumeAttachment) {
			va.Status.AttachError = &storagev1.VolumeError{ErrorCode: new(int32(-1))}
		}, []string{"status.attachError.errorCode: Invalid value"}},
		{"long error", func(va *storagev1.VolumeAttachment) {
			va.Status.DetachError = &storagev1.VolumeError{Message: strings.Repeat("x", 1025)}
		}, []string{"status.detachError.message: Too long"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			va := valid()
			tc.mutate(va)
			registrytest.ExpectErrors(t, ValidateVolumeAttachment(va), tc.want...)
		})
	}
	t.Run("update", func(t *testing.T) {
		old := valid()
		va := old.DeepCopy()
		va.Status.Attached = true
		registrytest.ExpectErrors(t, ValidateVolumeAttachmentUpdate(va, old))
		va.Spec.NodeName = "node-2"
		registrytest.ExpectErrors(t, ValidateVolumeAttachmentUpdate(va, old), "spec: Invalid value")
	})
}

func TestValidateVolumeAttributesClass(t *testing.T) {
	valid := func() *storagev1.VolumeAttributesClass {
		return &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "gold", ResourceVersion: "1"},
			DriverName: "csi.example.com", Parameters: map[string]string{"iops": "1000"}}
	}
	tests := []struct {
		name   string
		mutate func(*storagev1.VolumeAttributesClass)
		want   []string
	}{
		{"valid", func(*storagev1.VolumeAttributesClass) {}, nil},
		{"no driver", func(c *storagev1.VolumeAttributesClass) { c.DriverName = "" }, []string{"driverName: Required value"}},
		{"bad driver", func(c *storagev1.VolumeAttributesClass) { c.DriverName = "a b" }, []string{"driverName: Invalid value"}},
		{"no parameters", func(c *storagev1.VolumeAttributesClass) { c.Parameters = nil }, []string{"parameters: Required value"}},
		{"empty key", func(c *storagev1.VolumeAttributesClass) { c.Parameters[""] = "x" }, []string{"parameters: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.mutate(c)
			registrytest.ExpectErrors(t, ValidateVolumeAttributesClass(c), tc.want...)
		})
	}
	t.Run("update", func(t *testing.T) {
		old := valid()
		c := old.DeepCopy()
		c.Labels = map[string]string{"tier": "gold"}
		registrytest.ExpectErrors(t, ValidateVolumeAttributesClassUpdate(c, old))
		c.DriverName = "other.example.com"
		c.Parameters = map[string]string{"iops": "2000"}
		registrytest.ExpectErrors(t, ValidateVolumeAttributesClassUpdate(c, old), "driverName: Forbidden", "parameters: Forbidden")
	})
}
