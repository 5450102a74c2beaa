package core

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestImagePullPolicyDefault(t *testing.T) {
	for image, want := range map[string]corev1.PullPolicy{
		"nginx":                                 corev1.PullAlways,
		"nginx:latest":                          corev1.PullAlways,
		"nginx:1.27":                            corev1.PullIfNotPresent,
		"docker.io/library/nginx":               corev1.PullAlways,
		"localhost:5000/app":                    corev1.PullAlways,
		"localhost:5000/app:v1":                 corev1.PullIfNotPresent,
		"registry.k8s.io/pause:3.10":            corev1.PullIfNotPresent,
		"nginx@sha256:" + sixtyFourHex():        corev1.PullIfNotPresent,
		"nginx:latest@sha256:" + sixtyFourHex(): corev1.PullAlways,
		"":                                      corev1.PullIfNotPresent, // does not parse
		"Nginx":                                 corev1.PullIfNotPresent, // does not parse
	} {
		if got := defaultPullPolicy(image); got != want {
			t.Errorf("defaultPullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
}

func sixtyFourHex() string {
	return "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
}

func TestDefaultPod(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "c",
				Image: "nginx",
				Ports: []corev1.ContainerPort{{ContainerPort: 80}},
				Env:   []corev1.EnvVar{{Name: "N", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				},
				LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 90}}},
			}},
			Volumes: []corev1.Volume{
				{Name: "empty"},
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
				{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
				{Name: "hp", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}},
				{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				}}}},
			},
		},
	}
	DefaultPod(pod)

	spec := pod.Spec
	c := spec.Containers[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"restartPolicy", spec.RestartPolicy, corev1.RestartPolicyAlways},
		{"dnsPolicy", spec.DNSPolicy, corev1.DNSClusterFirst},
		{"schedulerName", spec.SchedulerName, "default-scheduler"},
		{"terminationGracePeriodSeconds", *spec.TerminationGracePeriodSeconds, int64(30)},
		{"securityContext", *spec.SecurityContext, corev1.PodSecurityContext{}},
		{"enableServiceLinks", *spec.EnableServiceLinks, true},
		{"imagePullPolicy", c.ImagePullPolicy, corev1.PullAlways},
		{"terminationMessagePath", c.TerminationMessagePath, "/dev/termination-log"},
		{"terminationMessagePolicy", c.TerminationMessagePolicy, corev1.TerminationMessageReadFile},
		{"port protocol", c.Ports[0].Protocol, corev1.ProtocolTCP},
		{"fieldRef apiVersion", c.Env[0].ValueFrom.FieldRef.APIVersion, "v1"},
		{"cpu request from limit", c.Resources.Requests.Cpu().String(), "500m"},
		{"probe timeout", c.LivenessProbe.TimeoutSeconds, int32(1)},
		{"probe period", c.LivenessProbe.PeriodSeconds, int32(10)},
		{"probe success", c.LivenessProbe.SuccessThreshold, int32(1)},
		{"probe failure", c.LivenessProbe.FailureThreshold, int32(3)},
		{"httpGet path", c.LivenessProbe.HTTPGet.Path, "/"},
		{"httpGet scheme", c.LivenessProbe.HTTPGet.Scheme, corev1.URISchemeHTTP},
		{"grpc service", *c.ReadinessProbe.GRPC.Service, ""},
		{"empty volume is emptyDir", spec.Volumes[0].EmptyDir != nil, true},
		{"secret defaultMode", *spec.Volumes[1].Secret.DefaultMode, int32(0644)},
		{"configMap defaultMode", *spec.Volumes[2].ConfigMap.DefaultMode, int32(420)},
		{"hostPath type", *spec.Volumes[3].HostPath.Type, corev1.HostPathUnset},
		{"projected defaultMode", *spec.Volumes[4].Projected.DefaultMode, int32(420)},
		{"token expiration", *spec.Volumes[4].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds, int64(3600)},
	}
	for _, ch := range checks {
		if !apiequality.Semantic.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}

	// Defaulting twice changes nothing.
	again := pod.DeepCopy()
	DefaultPod(again)
	if !apiequality.Semantic.DeepEqual(again, pod) {
		t.Errorf("defaulting is not idempotent")
	}
}

func TestDefaultPodHostNetworkPorts(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{
		Name: "c", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
	}}}}
	DefaultPod(pod)
	if got := pod.Spec.Containers[0].Ports[0].HostPort; got != 8080 {
		t.Errorf("hostPort = %d, want 8080", got)
	}
}

func TestDefaultPodTemplateSpecSkipsPodOnlyDefaults(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "x:1", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
	}}}}
	DefaultPodTemplateSpec(tmpl)
	if tmpl.Spec.EnableServiceLinks != nil {
		t.Errorf("enableServiceLinks must not be defaulted in templates")
	}
	if tmpl.Spec.Containers[0].Resources.Requests != nil {
		t.Errorf("requests must not be defaulted from limits in templates")
	}
	if tmpl.Spec.RestartPolicy != corev1.RestartPolicyAlways || tmpl.Spec.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("pod spec defaults missing: %+v", tmpl.Spec)
	}
}

func TestDefaultService(t *testing.T) {
	tests := []struct {
		name  string
		in    corev1.ServiceSpec
		check func(t *testing.T, s corev1.ServiceSpec)
	}{
		{
			name: "cluster IP",
			in:   corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
			check: func(t *testing.T, s corev1.ServiceSpec) {
				if s.Type != corev1.ServiceTypeClusterIP || s.SessionAffinity != corev1.ServiceAffinityNone {
					t.Errorf("type/sessionAffinity = %s/%s", s.Type, s.SessionAffinity)
				}
				if s.Ports[0].Protocol != corev1.ProtocolTCP || s.Ports[0].TargetPort != intstr.FromInt32(80) {
					t.Errorf("port = %+v", s.Ports[0])
				}
				if s.InternalTrafficPolicy == nil || *s.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster {
					t.Errorf("internalTrafficPolicy = %v", s.InternalTrafficPolicy)
				}
				if s.ExternalTrafficPolicy != "" || s.AllocateLoadBalancerNodePorts != nil {
					t.Errorf("unexpected LB fields: %+v", s)
				}
			},
		},
		{
			name: "load balancer with client IP affinity",
			in:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityClientIP, Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromString("https")}}},
			check: func(t *testing.T, s corev1.ServiceSpec) {
				if s.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
					t.Errorf("externalTrafficPolicy = %q", s.ExternalTrafficPolicy)
				}
				if s.AllocateLoadBalancerNodePorts == nil || !*s.AllocateLoadBalancerNodePorts {
					t.Errorf("allocateLoadBalancerNodePorts = %v", s.AllocateLoadBalancerNodePorts)
				}
				if s.SessionAffinityConfig == nil || *s.SessionAffinityConfig.ClientIP.TimeoutSeconds != 10800 {
					t.Errorf("sessionAffinityConfig = %+v", s.SessionAffinityConfig)
				}
				if s.Ports[0].TargetPort != intstr.FromString("https") {
					t.Errorf("named targetPort overwritten: %+v", s.Ports[0].TargetPort)
				}
			},
		},
		{
			name: "external name",
			in:   corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"},
			check: func(t *testing.T, s corev1.ServiceSpec) {
				if s.InternalTrafficPolicy != nil {
					t.Errorf("internalTrafficPolicy must stay unset for ExternalName")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: tc.in}
			DefaultService(svc)
			tc.check(t, svc.Spec)
		})
	}
}

func TestDefaultSmallKinds(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	DefaultNamespace(ns)
	if ns.Labels[corev1.LabelMetadataName] != "team-a" || ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("namespace defaults: %+v", ns)
	}

	s := &corev1.Secret{}
	DefaultSecret(s)
	if s.Type != corev1.SecretTypeOpaque {
		t.Errorf("secret type = %q", s.Type)
	}

	pv := &corev1.PersistentVolume{}
	DefaultPersistentVolume(pv)
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || pv.Status.Phase != corev1.VolumePending {
		t.Errorf("pv defaults: %+v", pv)
	}

	pvc := &corev1.PersistentVolumeClaim{}
	DefaultPersistentVolumeClaim(pvc)
	if *pvc.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || pvc.Status.Phase != corev1.ClaimPending {
		t.Errorf("pvc defaults: %+v", pvc)
	}

	node := &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}
	DefaultNode(node)
	if node.Status.Allocatable.Cpu().String() != "4" {
		t.Errorf("allocatable = %v", node.Status.Allocatable)
	}

	ep := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 80}}}}}
	DefaultEndpoints(ep)
	if ep.Subsets[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("endpoint port protocol = %q", ep.Subsets[0].Ports[0].Protocol)
	}

	lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer,
		Max:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Min:  corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
	}}}}
	DefaultLimitRange(lr)
	item := lr.Spec.Limits[0]
	if item.Default.Cpu().String() != "2" || item.DefaultRequest.Cpu().String() != "2" || item.DefaultRequest.Memory().String() != "64Mi" {
		t.Errorf("limit range defaults: %+v", item)
	}

	rq := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.0001")}}}
	DefaultResourceQuota(rq)
	if got := rq.Spec.Hard.Cpu().String(); got != "1m" {
		t.Errorf("quantities are rounded up to milli units: got %s", got)
	}
}

// The singular and plural IP fields are kept in step, as upstream's v1
// conversion keeps them (kwok sets only status.podIP; the EndpointSlice
// controller reads status.podIPs).
func TestSyncPodIPs(t *testing.T) {
	ips := func(v ...string) []corev1.PodIP {
		var out []corev1.PodIP
		for _, ip := range v {
			out = append(out, corev1.PodIP{IP: ip})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		in      corev1.PodStatus
		wantIP  string
		wantIPs []corev1.PodIP
	}{
		{"none", corev1.PodStatus{}, "", nil},
		{"singular only", corev1.PodStatus{PodIP: "10.0.0.1"}, "10.0.0.1", ips("10.0.0.1")},
		{"plural only", corev1.PodStatus{PodIPs: ips("10.0.0.1", "fd00::1")}, "10.0.0.1", ips("10.0.0.1", "fd00::1")},
		{"both agree", corev1.PodStatus{PodIP: "10.0.0.1", PodIPs: ips("10.0.0.1", "fd00::1")}, "10.0.0.1", ips("10.0.0.1", "fd00::1")},
		{"disagree: singular wins", corev1.PodStatus{PodIP: "10.0.0.2", PodIPs: ips("10.0.0.1", "fd00::1")}, "10.0.0.2", ips("10.0.0.2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: tc.in}
			pod.Status.HostIP = tc.in.PodIP // the same rules for hostIP/hostIPs
			DefaultPod(pod)
			if pod.Status.PodIP != tc.wantIP || !reflect.DeepEqual(pod.Status.PodIPs, tc.wantIPs) {
				t.Errorf("podIP %q podIPs %v, want %q %v", pod.Status.PodIP, pod.Status.PodIPs, tc.wantIP, tc.wantIPs)
			}
			if tc.in.PodIP != "" && (len(pod.Status.HostIPs) != 1 || pod.Status.HostIPs[0].IP != tc.in.PodIP) {
				t.Errorf("hostIPs %v, want [%s]", pod.Status.HostIPs, tc.in.PodIP)
			}
		})
	}
	node := &corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24"}}
	DefaultNode(node)
	if !reflect.DeepEqual(node.Spec.PodCIDRs, []string{"10.244.1.0/24"}) {
		t.Errorf("podCIDRs = %v", node.Spec.PodCIDRs)
	}
}
