package core

import (
	"github.com/skiff-sh/skiff/pkg/registry/registrytest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func validPod() *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "nginx",
				Image: "nginx:1.27",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				},
				VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}},
			}},
			Volumes: []corev1.Volume{{Name: "data"}},
		},
	}
	DefaultPod(pod)
	return pod
}

func TestValidatePod(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   []string
	}{
		{name: "valid"},
		{name: "missing name", mutate: func(p *corev1.Pod) { p.Name = "" }, want: []string{"metadata.name: Required value"}},
		{name: "bad name", mutate: func(p *corev1.Pod) { p.Name = "Web_1" }, want: []string{"metadata.name: Invalid value"}},
		{name: "missing namespace", mutate: func(p *corev1.Pod) { p.Namespace = "" }, want: []string{"metadata.namespace: Required value"}},
		{name: "bad label", mutate: func(p *corev1.Pod) { p.Labels["bad key!"] = "x" }, want: []string{"metadata.labels: Invalid value"}},
		{name: "bad finalizer", mutate: func(p *corev1.Pod) { p.Finalizers = []string{"custom"} }, want: []string{"metadata.finalizers[0]: Invalid value"}},
		{name: "no containers", mutate: func(p *corev1.Pod) { p.Spec.Containers = nil }, want: []string{"spec.containers: Required value"}},
		{name: "no image", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, want: []string{"spec.containers[0].image: Required value"}},
		{name: "image with spaces", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = " nginx" }, want: []string{"spec.containers[0].image: Invalid value"}},
		{name: "duplicate container names", mutate: func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
			p.Spec.Containers[1].Ports = nil
		}, want: []string{"spec.containers[1].name: Duplicate value"}},
		{name: "init container name clashes", mutate: func(p *corev1.Pod) {
			ic := p.Spec.Containers[0]
			ic.Ports, ic.ReadinessProbe = nil, nil
			p.Spec.InitContainers = []corev1.Container{ic}
		}, want: []string{"spec.initContainers[0].name: Duplicate value"}},
		{name: "init container probe", mutate: func(p *corev1.Pod) {
			ic := p.Spec.Containers[0]
			ic.Name, ic.Ports = "init", nil
			p.Spec.InitContainers = []corev1.Container{ic}
		}, want: []string{"spec.initContainers[0].readinessProbe: Forbidden"}},
		{name: "sidecar may have probes", mutate: func(p *corev1.Pod) {
			ic := p.Spec.Containers[0]
			ic.Name, ic.Ports = "sidecar", nil
			ic.RestartPolicy = ptrOf(corev1.ContainerRestartPolicyAlways)
			p.Spec.InitContainers = []corev1.Container{ic}
		}},
		{name: "bad container name", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Name = "Nginx" }, want: []string{"spec.containers[0].name: Invalid value"}},
		{name: "port out of range", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 70000 }, want: []string{"spec.containers[0].ports[0].containerPort: Invalid value"}},
		{name: "bad protocol", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "HTTP" }, want: []string{"spec.containers[0].ports[0].protocol: Unsupported value"}},
		{name: "requests above limits", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		}, want: []string{"spec.containers[0].resources.requests: Invalid value"}},
		{name: "unknown resource", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits["gpu"] = resource.MustParse("1")
		}, want: []string{"spec.containers[0].resources.limits[gpu]: Invalid value", "spec.containers[0].resources.limits[gpu]: Invalid value"}},
		{name: "extended resource request without limit", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
		}, want: []string{"spec.containers[0].resources.limits: Required value"}},
		{name: "negative quantity", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("-1")
		}, want: []string{"spec.containers[0].resources.limits[memory]: Invalid value", "spec.containers[0].resources.requests: Invalid value"}},
		{name: "unknown volume mount", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].VolumeMounts[0].Name = "nope" }, want: []string{"spec.containers[0].volumeMounts[0].name: Not found"}},
		{name: "duplicate volume", mutate: func(p *corev1.Pod) { p.Spec.Volumes = append(p.Spec.Volumes, p.Spec.Volumes[0]) }, want: []string{"spec.volumes[1].name: Duplicate value"}},
		{name: "two volume sources", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes[0].HostPath = &corev1.HostPathVolumeSource{Path: "/x"}
		}, want: []string{"spec.volumes[0].emptyDir: Forbidden", "spec.containers[0].volumeMounts[0].name: Not found"}},
		{name: "secret volume without name", mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}})
		}, want: []string{"spec.volumes[1].secret.secretName: Required value"}},
		{name: "bad restart policy", mutate: func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, want: []string{"spec.restartPolicy: Unsupported value"}},
		{name: "no grace period", mutate: func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = nil }, want: []string{"spec.terminationGracePeriodSeconds: Required value"}},
		{name: "probe without handler", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe.HTTPGet = nil
		}, want: []string{"spec.containers[0].readinessProbe: Required value"}},
		{name: "liveness success threshold", mutate: func(p *corev1.Pod) {
			pr := p.Spec.Containers[0].ReadinessProbe.DeepCopy()
			pr.SuccessThreshold = 2
			p.Spec.Containers[0].LivenessProbe = pr
		}, want: []string{"spec.containers[0].livenessProbe.successThreshold: Invalid value"}},
		{name: "env without name", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Value: "x"}} }, want: []string{"spec.containers[0].env[0].name: Required value"}},
		{name: "env field ref", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.bogus"}}}}
		}, want: []string{"spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value"}},
		{name: "env label subscript", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels['app']"}}}}
		}},
		{name: "toleration without key", mutate: func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "x"}}
		}, want: []string{"spec.tolerations[0].operator: Invalid value"}},
		{name: "dnsPolicy None needs config", mutate: func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSNone }, want: []string{"spec.dnsConfig: Required value"}},
		{name: "ephemeral containers on create", mutate: func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile}}}
		}, want: []string{"spec.ephemeralContainers: Forbidden"}},
		{name: "host port conflict", mutate: func(p *corev1.Pod) {
			c := p.Spec.Containers[0]
			c.Name, c.Ports = "other", []corev1.ContainerPort{{ContainerPort: 81, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
			c.ReadinessProbe = nil
			p.Spec.Containers[0].Ports[0].HostPort = 8080
			p.Spec.Containers = append(p.Spec.Containers, c)
		}, want: []string{"spec.containers[1].ports[0].hostPort: Duplicate value"}},
		{name: "hostNetwork port mismatch", mutate: func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports[0].HostPort = 8080
		}, want: []string{"spec.containers[0].ports[0].hostPort: Invalid value"}},
		{name: "bad node selector", mutate: func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"a": "b c"} }, want: []string{"spec.nodeSelector: Invalid value"}},
		{name: "bad affinity", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}}
		}, want: []string{"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value"}},
		{name: "mirror pod annotation needs node", mutate: func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}, want: []string{"metadata.annotations[kubernetes.io/config.mirror]: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := validPod()
			if tc.mutate != nil {
				tc.mutate(pod)
			}
			registrytest.ExpectErrors(t, ValidatePod(pod), tc.want...)
		})
	}
}

func TestPodErrorRendering(t *testing.T) {
	pod := validPod()
	pod.Spec.Containers[0].Image = ""
	errs := ValidatePod(pod)
	if len(errs) != 1 || errs[0].Error() != "spec.containers[0].image: Required value" {
		t.Errorf("got %v", errs)
	}
}

func TestValidatePodUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   []string
	}{
		{name: "no change"},
		{name: "image", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" }},
		{name: "labels", mutate: func(p *corev1.Pod) { p.Labels["tier"] = "front" }},
		{name: "add toleration", mutate: func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists})
		}},
		{name: "lower activeDeadlineSeconds", mutate: func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptrOf(int64(10)) }},
		{name: "port change", mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 81 }, want: []string{"spec: Forbidden"}},
		{name: "add container", mutate: func(p *corev1.Pod) {
			c := p.Spec.Containers[0]
			c.Name, c.Ports = "two", nil
			p.Spec.Containers = append(p.Spec.Containers, c)
		}, want: []string{"spec.containers: Forbidden"}},
		{name: "remove toleration", mutate: func(p *corev1.Pod) { p.Spec.Tolerations = nil }, want: []string{"spec.tolerations: Forbidden"}},
		{name: "rename", mutate: func(p *corev1.Pod) { p.Name = "other" }, want: []string{"metadata.name: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validPod()
			old.ResourceVersion = "1"
			old.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}}
			old.Spec.ActiveDeadlineSeconds = ptrOf(int64(100))
			pod := old.DeepCopy()
			if tc.mutate != nil {
				tc.mutate(pod)
			}
			registrytest.ExpectErrors(t, ValidatePodUpdate(pod, old), tc.want...)
		})
	}

	old := validPod()
	old.ResourceVersion = "1"
	pod := old.DeepCopy()
	pod.Spec.Containers[0].Ports[0].ContainerPort = 81
	errs := ValidatePodUpdate(pod, old)
	want := "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), want) {
		t.Errorf("got %v", errs)
	}
}

func TestValidatePodStatusUpdate(t *testing.T) {
	old := validPod()
	old.ResourceVersion = "1"
	old.Spec.RestartPolicy = corev1.RestartPolicyNever
	old.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "nginx", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}

	pod := old.DeepCopy()
	pod.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}
	registrytest.ExpectErrors(t, ValidatePodStatusUpdate(pod, old))

	pod = old.DeepCopy()
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}}
	pod.Spec.NodeName = "n1"
	registrytest.ExpectErrors(t, ValidatePodStatusUpdate(pod, old),
		"status.containerStatuses[0].state: Forbidden", "status.podIPs: Invalid value", "status.nodeName: Forbidden")
}

func TestValidatePodTemplate(t *testing.T) {
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "default"}, Template: corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}},
	}}
	DefaultPodTemplate(pt)
	registrytest.ExpectErrors(t, ValidatePodTemplate(pt))
	pt.Template.Labels["-bad"] = "x"
	pt.Template.Spec.Containers[0].Image = ""
	registrytest.ExpectErrors(t, ValidatePodTemplate(pt), "template.labels: Invalid value", "template.spec.containers[0].image: Required value")

	old := pt.DeepCopy()
	old.ResourceVersion = "3"
	pt = old.DeepCopy()
	pt.Template.Labels = map[string]string{"app": "y"}
	pt.Template.Spec.Containers[0].Image = "y"
	registrytest.ExpectErrors(t, ValidatePodTemplateUpdate(pt, old))
}

func validService() *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Selector:   map[string]string{"app": "web"},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
			ClusterIP:  "10.96.0.10",
			ClusterIPs: []string{"10.96.0.10"},
		},
	}
	DefaultService(svc)
	return svc
}

func TestValidateService(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *corev1.Service)
		want   []string
	}{
		{name: "valid"},
		{name: "name must start with a letter", mutate: func(s *corev1.Service) { s.Name = "1web" }, want: []string{"metadata.name: Invalid value"}},
		{name: "no ports", mutate: func(s *corev1.Service) { s.Spec.Ports = nil }, want: []string{"spec.ports: Required value"}},
		{name: "headless without ports", mutate: func(s *corev1.Service) {
			s.Spec.Ports = nil
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
		}},
		{name: "unnamed second port", mutate: func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(443)})
		}, want: []string{"spec.ports[1].name: Required value"}},
		{name: "duplicate port", mutate: func(s *corev1.Service) {
			p := s.Spec.Ports[0]
			p.Name = "other"
			s.Spec.Ports = append(s.Spec.Ports, p)
		}, want: []string{"spec.ports[1]: Duplicate value"}},
		{name: "port zero", mutate: func(s *corev1.Service) { s.Spec.Ports[0].Port = 0 }, want: []string{"spec.ports[0].port: Invalid value"}},
		{name: "bad type", mutate: func(s *corev1.Service) { s.Spec.Type = "Magic" }, want: []string{"spec.type: Unsupported value"}},
		{name: "nodePort on ClusterIP", mutate: func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30080 }, want: []string{"spec.ports[0].nodePort: Forbidden"}},
		{name: "clusterIPs mismatch", mutate: func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.96.0.11"} }, want: []string{"spec.clusterIPs: Invalid value"}},
		{name: "external name", mutate: func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com."}
			DefaultService(s)
		}},
		{name: "external name missing", mutate: func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}
			DefaultService(s)
		}, want: []string{"spec.externalName: Required value"}},
		{name: "load balancer", mutate: func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			DefaultService(s)
		}},
		{name: "headless load balancer", mutate: func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
			DefaultService(s)
		}, want: []string{"spec.clusterIPs[0]: Invalid value"}},
		{name: "session affinity config with None", mutate: func(s *corev1.Service) {
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{}
		}, want: []string{"spec.sessionAffinityConfig: Forbidden"}},
		{name: "loopback external IP", mutate: func(s *corev1.Service) {
			s.Spec.ExternalIPs = []string{"127.0.0.1"}
			DefaultService(s)
		}, want: []string{"spec.externalIPs[0]: Invalid value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := validService()
			if tc.mutate != nil {
				tc.mutate(svc)
			}
			registrytest.ExpectErrors(t, ValidateService(svc), tc.want...)
		})
	}
}

func TestValidateServiceUpdate(t *testing.T) {
	old := validService()
	old.ResourceVersion = "5"

	svc := old.DeepCopy()
	svc.Spec.Selector = map[string]string{"app": "web2"}
	registrytest.ExpectErrors(t, ValidateServiceUpdate(svc, old))

	svc = old.DeepCopy()
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "10.96.0.99", []string{"10.96.0.99"}
	registrytest.ExpectErrors(t, ValidateServiceUpdate(svc, old), "spec.clusterIPs[0]: Invalid value")

	svc = old.DeepCopy()
	svc.ResourceVersion = ""
	registrytest.ExpectErrors(t, ValidateServiceUpdate(svc, old), "metadata.resourceVersion: Invalid value")

	// Status: ingress points only for load balancers.
	svc = old.DeepCopy()
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}
	registrytest.ExpectErrors(t, ValidateServiceStatusUpdate(svc, old), "status.loadBalancer.ingress: Forbidden")
}

func TestValidateConfigMap(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default"}, Data: map[string]string{"app.yaml": "x", "KEY_1": "y"}}
	registrytest.ExpectErrors(t, ValidateConfigMap(cm))

	bad := cm.DeepCopy()
	bad.Data["bad/key"] = "x"
	bad.BinaryData = map[string][]byte{"KEY_1": nil}
	registrytest.ExpectErrors(t, ValidateConfigMap(bad), "data[bad/key]: Invalid value", "data[KEY_1]: Invalid value")

	big := cm.DeepCopy()
	big.Data["big"] = strings.Repeat("x", corev1.MaxSecretSize)
	// The error is about the whole object; upstream's empty path renders as "[]".
	registrytest.ExpectErrors(t, ValidateConfigMap(big), "[]: Too long")

	old := cm.DeepCopy()
	old.ResourceVersion = "1"
	old.Immutable = ptrOf(true)
	upd := old.DeepCopy()
	upd.Data["app.yaml"] = "changed"
	registrytest.ExpectErrors(t, ValidateConfigMapUpdate(upd, old), "data: Forbidden")
	upd = old.DeepCopy()
	upd.Immutable = nil
	registrytest.ExpectErrors(t, ValidateConfigMapUpdate(upd, old), "immutable: Forbidden")
	upd = old.DeepCopy()
	upd.Labels = map[string]string{"a": "b"}
	registrytest.ExpectErrors(t, ValidateConfigMapUpdate(upd, old))
}

func TestValidateSecret(t *testing.T) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Data: map[string][]byte{"password": []byte("x")}}
	DefaultSecret(s)
	registrytest.ExpectErrors(t, ValidateSecret(s))

	tls := s.DeepCopy()
	tls.Type = corev1.SecretTypeTLS
	registrytest.ExpectErrors(t, ValidateSecret(tls), "data[tls.crt]: Required value", "data[tls.key]: Required value")

	docker := s.DeepCopy()
	docker.Type = corev1.SecretTypeDockerConfigJson
	docker.Data = map[string][]byte{corev1.DockerConfigJsonKey: []byte("{not json")}
	registrytest.ExpectErrors(t, ValidateSecret(docker), "data[.dockerconfigjson]: Invalid value")

	old := s.DeepCopy()
	old.ResourceVersion = "1"
	old.Immutable = ptrOf(true)
	upd := old.DeepCopy()
	upd.Data["password"] = []byte("y")
	upd.Type = corev1.SecretTypeBasicAuth
	registrytest.ExpectErrors(t, ValidateSecretUpdate(upd, old), "data: Forbidden", "type: Invalid value")
}

func TestValidateNamespace(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	DefaultNamespace(ns)
	registrytest.ExpectErrors(t, ValidateNamespace(ns))

	bad := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team.a", Namespace: "x"}}
	registrytest.ExpectErrors(t, ValidateNamespace(bad), "metadata.name: Invalid value", "metadata.namespace: Forbidden")

	old := ns.DeepCopy()
	old.ResourceVersion = "1"
	st := old.DeepCopy()
	st.Status.Phase = corev1.NamespaceTerminating
	registrytest.ExpectErrors(t, ValidateNamespaceStatusUpdate(st, old), "status.Phase: Invalid value")
	registrytest.ExpectErrors(t, ValidateNamespaceUpdate(old.DeepCopy(), old))
}

func TestValidateNode(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1.example.com"}, Spec: corev1.NodeSpec{
		PodCIDRs: []string{"10.244.0.0/24"},
		Taints:   []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
	}}
	DefaultNode(node)
	registrytest.ExpectErrors(t, ValidateNode(node))

	bad := node.DeepCopy()
	bad.Spec.Taints = append(bad.Spec.Taints, bad.Spec.Taints[0], corev1.Taint{Key: "x", Effect: "Sometimes"})
	registrytest.ExpectErrors(t, ValidateNode(bad), "metadata.taints[1]: Duplicate value", "metadata.taints[2].effect: Unsupported value")

	old := node.DeepCopy()
	old.ResourceVersion = "1"
	upd := old.DeepCopy()
	upd.Spec.Unschedulable = true
	upd.Spec.Taints = nil
	registrytest.ExpectErrors(t, ValidateNodeUpdate(upd, old))
	upd.Spec.PodCIDRs = []string{"10.245.0.0/24"}
	registrytest.ExpectErrors(t, ValidateNodeUpdate(upd, old), "spec.podCIDRs: Forbidden")
}

func TestValidatePersistentVolumeAndClaim(t *testing.T) {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
	}}
	DefaultPersistentVolume(pv)
	registrytest.ExpectErrors(t, ValidatePersistentVolume(pv))

	bad := pv.DeepCopy()
	bad.Spec.AccessModes = nil
	bad.Spec.HostPath = nil
	registrytest.ExpectErrors(t, ValidatePersistentVolume(bad), "spec.accessModes: Required value", "spec: Required value")

	oldPV := pv.DeepCopy()
	oldPV.ResourceVersion = "1"
	updPV := oldPV.DeepCopy()
	updPV.Spec.HostPath.Path = "/other"
	registrytest.ExpectErrors(t, ValidatePersistentVolumeUpdate(updPV, oldPV), "spec.persistentvolumesource: Forbidden")

	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
	DefaultPersistentVolumeClaim(pvc)
	registrytest.ExpectErrors(t, ValidatePersistentVolumeClaim(pvc))

	noSize := pvc.DeepCopy()
	noSize.Spec.Resources.Requests = nil
	noSize.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce}
	registrytest.ExpectErrors(t, ValidatePersistentVolumeClaim(noSize), "spec.resources[storage]: Required value", "spec.accessModes: Forbidden")

	old := pvc.DeepCopy()
	old.ResourceVersion = "1"
	old.Spec.VolumeName = "pv1"
	old.Status.Phase = corev1.ClaimBound
	old.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}

	grow := old.DeepCopy()
	grow.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	registrytest.ExpectErrors(t, ValidatePersistentVolumeClaimUpdate(grow, old))

	shrink := old.DeepCopy()
	shrink.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("500Mi")
	registrytest.ExpectErrors(t, ValidatePersistentVolumeClaimUpdate(shrink, old), "spec.resources.requests.storage: Forbidden")

	modes := old.DeepCopy()
	modes.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	registrytest.ExpectErrors(t, ValidatePersistentVolumeClaimUpdate(modes, old), "spec: Forbidden")

	// An unbound claim gets its volumeName once.
	unbound := pvc.DeepCopy()
	unbound.ResourceVersion = "1"
	bind := unbound.DeepCopy()
	bind.Spec.VolumeName = "pv1"
	registrytest.ExpectErrors(t, ValidatePersistentVolumeClaimUpdate(bind, unbound))
}

func TestValidateSmallKinds(t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "default"}}
	registrytest.ExpectErrors(t, ValidateServiceAccount(sa))
	old := sa.DeepCopy()
	old.ResourceVersion = "1"
	registrytest.ExpectErrors(t, ValidateServiceAccountUpdate(old.DeepCopy(), old))

	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}},
		Ports:     []corev1.EndpointPort{{Port: 80}},
	}}}
	DefaultEndpoints(ep)
	registrytest.ExpectErrors(t, ValidateEndpoints(ep))
	ep.Subsets[0].Addresses[0].IP = "127.0.0.1"
	registrytest.ExpectErrors(t, ValidateEndpoints(ep), "subsets[0].addresses[0].ip: Invalid value")

	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.1789", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: "default"}, Reason: "Started"}
	registrytest.ExpectErrors(t, ValidateEvent(ev))
	ev.InvolvedObject.Namespace = "other"
	registrytest.ExpectErrors(t, ValidateEvent(ev), "involvedObject.namespace: Invalid value")

	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer,
		Max:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		Min:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
	}}}}
	registrytest.ExpectErrors(t, ValidateLimitRange(lr), "spec.limits[0].min[cpu]: Invalid value")

	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "quota", Namespace: "default"}, Spec: corev1.ResourceQuotaSpec{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), "count/deployments.apps": resource.MustParse("2")},
	}}
	registrytest.ExpectErrors(t, ValidateResourceQuota(rq))
	rq.Spec.Hard["widgets"] = resource.MustParse("1")
	rq.Spec.Hard[corev1.ResourcePods] = resource.MustParse("1.5")
	rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort}
	registrytest.ExpectErrors(t, ValidateResourceQuota(rq),
		"spec.hard[widgets]: Invalid value", "spec.hard[widgets]: Invalid value", "spec.hard[pods]: Invalid value", "spec.scopes: Invalid value")
}
